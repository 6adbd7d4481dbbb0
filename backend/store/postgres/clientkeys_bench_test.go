package postgres

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// benchSize is how many rows a benchmark seeds: the variable env's
// number, or def. A benchmark runs only under -bench, never in go test's
// run.
func benchSize(env string, def int) int {
	n, err := strconv.Atoi(os.Getenv(env))
	if err != nil || n <= 0 {
		return def
	}
	return n
}

// BenchmarkListKeysPage is one page of 100 keys (the Admin API's GET
// /admin/v1/keys) from the middle of N keys (HDC_BENCH_KEYS) of 1,000
// workspaces, 4 keys a client, a quarter retiring and a quarter retired,
// for each filter; it reports the p99 of a page in ms. The keys are
// seeded in one statement, as an import would store them, without their
// audit records, which a page does not read.
func BenchmarkListKeysPage(b *testing.B) {
	s := open(b, pgtest.URL(b))
	n := benchSize("HDC_BENCH_KEYS", 10_000) // the figure is at 1,000,000; CI stays fast
	if _, err := s.pool.Exec(b.Context(), `INSERT INTO client_keys (kid, client_id, workspace_id, secret, enc, require_fresh, status, created_at, seq, last_used_at)
		SELECT 'k' || lpad(i::text, 8, '0'), 'c' || (i / 4), 'w' || (i % 1000), 'sealed', 'A256GCM', true,
			(ARRAY['active', 'active', 'retiring', 'retired'])[i % 4 + 1], now(), i, now()
		FROM generate_series(1, $1::int) AS i`, n); err != nil {
		b.Fatal(err)
	}
	if _, err := s.pool.Exec(b.Context(), `ANALYZE client_keys`); err != nil {
		b.Fatal(err)
	}
	mid := "k" + strconv.Itoa(100_000_000 + n/2)[1:]
	for _, bf := range []struct {
		name string
		f    store.ClientKeyFilter
	}{
		{"all", store.ClientKeyFilter{}},
		{"workspace", store.ClientKeyFilter{WorkspaceID: "w7"}},
		{"status", store.ClientKeyFilter{Status: clientkey.Retiring}},
		{"workspace+status", store.ClientKeyFilter{WorkspaceID: "w7", Status: clientkey.Active}},
		{"client", store.ClientKeyFilter{ClientID: "c" + strconv.Itoa(n/8)}},
	} {
		b.Run(bf.name, func(b *testing.B) {
			f := bf.f
			f.After, f.Limit = mid, 100
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := s.ListClientKeys(b.Context(), f); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
