package postgres

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
)

// seedClients stores n clients of 1,000 workspaces in a few statements, as
// an import would, without their audit records, which a search does not
// read: names of five kinds followed by the hex of the client's number's
// MD5 ("Clinic 3fa2…"), and labels env (prod 6 in 10, staging 3, dev 1),
// region (one of 20) and, for 1 in 100, tier=gold, each of the others
// (and of the workspace) drawn apart.
func seedClients(b *testing.B, s *Store, n int) {
	ctx := b.Context()
	for _, stmt := range []string{
		`INSERT INTO workspaces (id, created_at) SELECT 'w' || i, now() FROM generate_series(0, 999) AS i`,
		`INSERT INTO clients (id, workspace_id, secret_hash, status, created_at, name, name_key, labels)
		SELECT 'c' || lpad(i::text, 8, '0'), 'w' || (i / 10 % 1000), 'h', 'active', timestamptz '2026-01-01' + i * interval '1 second',
			name, lower(name), '{}'
		FROM (SELECT i, (ARRAY['Clinic', 'Lab', 'Pharmacy', 'Hospital', 'Practice'])[i % 5 + 1] || ' ' || md5(i::text) AS name
			FROM generate_series(1, $1::int) AS i) AS named`,
		`INSERT INTO client_labels (client_id, key, value, created_at, name_key)
		SELECT c.id, l.key, l.value, c.created_at, c.name_key
		FROM generate_series(1, $1::int) AS i JOIN clients c ON c.id = 'c' || lpad(i::text, 8, '0'),
		LATERAL (VALUES ('env', (ARRAY['prod', 'prod', 'prod', 'prod', 'prod', 'prod', 'staging', 'staging', 'staging', 'dev'])[i % 10 + 1]),
			('region', 'r' || (i / 10 % 20)), ('tier', CASE WHEN i / 5 % 100 = 7 THEN 'gold' END)) AS l (key, value)
		WHERE l.value IS NOT NULL`,
		`UPDATE clients c SET labels = l.labels FROM (SELECT client_id, json_object_agg(key, value)::text AS labels
			FROM client_labels GROUP BY client_id) AS l WHERE l.client_id = c.id`,
		`VACUUM ANALYZE workspaces, clients, client_labels`,
	} {
		var args []any
		if slices.Contains([]byte(stmt), '$') {
			args = []any{n}
		}
		if _, err := s.pool.Exec(ctx, stmt, args...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientSearch is one page of 100 clients (the Admin API's GET
// /admin/v1/clients?name_prefix=…&label=…, the store's query) among N
// clients (HDC_BENCH_CLIENTS) by a name's prefix, by label and by both; it
// reports the p50 and p99 of a page in ms.
func BenchmarkClientSearch(b *testing.B) {
	s := open(b, pgtest.URL(b))
	n := benchSize("HDC_BENCH_CLIENTS", 1_000_000) // the figure
	start := time.Now()
	seedClients(b, s, n)
	b.Logf("seeded %d clients in %v", n, time.Since(start).Round(time.Second))
	prod, gold := store.Label{Key: "env", Value: "prod"}, store.Label{Key: "tier", Value: "gold"}
	region := store.Label{Key: "region", Value: "r7"}
	mid := store.ClientCursor{CreatedAt: time.Date(2026, 1, 1, 0, 0, n/2, 0, time.UTC), ID: "c" + strconv.Itoa(100_000_000 + n/2)[1:]}
	for _, bf := range []struct {
		name string
		f    store.ClientFilter
	}{
		{"name-prefix", store.ClientFilter{NamePrefix: "clinic 3f"}},
		{"name-prefix-broad", store.ClientFilter{NamePrefix: "Lab"}},
		{"name-prefix-next-page", store.ClientFilter{NamePrefix: "clinic", After: store.ClientCursor{Name: "clinic 8", ID: "c"}}},
		{"label", store.ClientFilter{Labels: []store.Label{prod}}},
		{"label-rare", store.ClientFilter{Labels: []store.Label{gold}}},
		{"label-from-the-middle", store.ClientFilter{Labels: []store.Label{prod}, After: mid}},
		{"two-labels", store.ClientFilter{Labels: []store.Label{prod, region}}},
		{"both", store.ClientFilter{NamePrefix: "clinic 3f", Labels: []store.Label{prod}}},
		{"both-broad-prefix-rare-label", store.ClientFilter{NamePrefix: "clinic", Labels: []store.Label{gold}}},
		{"both-in-a-workspace", store.ClientFilter{WorkspaceID: "w7", NamePrefix: "clinic", Labels: []store.Label{prod}}},
	} {
		b.Run(bf.name, func(b *testing.B) {
			f := bf.f
			f.Limit = 100
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				list, err := s.ListClients(b.Context(), f)
				if err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
				if len(list) == 0 {
					b.Fatalf("%+v found nothing", f)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
