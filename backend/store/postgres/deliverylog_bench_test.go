package postgres

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
)

// benchAttempts is how many attempts BenchmarkDeliveryLogPage seeds:
// HDC_BENCH_ATTEMPTS, 10,000 by default so that CI stays fast (the issue's
// figure is at 1,000,000).
func benchAttempts(b *testing.B) int {
	n, err := strconv.Atoi(os.Getenv("HDC_BENCH_ATTEMPTS"))
	if err != nil || n <= 0 {
		return 10_000
	}
	return n
}

// benchSubscriptions is how many subscriptions (of as many workspaces)
// share the seeded deliveries.
const benchSubscriptions = 10

// benchSubscription is the prefix of their ids, each followed by a digit.
const benchSubscription = "00000000-0000-4000-8000-00000000000"

// BenchmarkDeliveryLogPage is one page of 50 of a subscription's delivery
// log (GET …/subscriptions/{id}/deliveries) from the middle of its log,
// among N attempts (HDC_BENCH_ATTEMPTS): N/2 deliveries of 10
// subscriptions, 2 attempts each, a quarter each delivered, failed,
// given up and canceled, of two event types in turn in each subscription's
// log; for each filter, it reports
// the p99 of a page in ms. The rows are seeded in bulk statements.
func BenchmarkDeliveryLogPage(b *testing.B) {
	s := open(b, pgtest.URL(b))
	seedDeliveryLog(b, s, benchAttempts(b)/2)
	// The middle of s3's log: its deliveries are every 10th, newest first.
	mid, err := s.ListDeliveries(b.Context(), store.DeliveryFilter{WorkspaceID: "w3", SubscriptionID: benchSubscription + "3", Limit: benchAttempts(b) / 40})
	if err != nil || len(mid) == 0 {
		b.Fatal(len(mid), err)
	}
	cur := store.Cursor{CreatedAt: mid[len(mid)-1].CreatedAt, ID: mid[len(mid)-1].ID}
	t0 := cur.CreatedAt
	for _, bf := range []struct {
		name string
		f    store.DeliveryFilter
	}{
		{"all", store.DeliveryFilter{}},
		{"status", store.DeliveryFilter{Status: store.DeliveryLogFailed}},
		{"event_type", store.DeliveryFilter{EventType: "user.delete"}},
		{"window", store.DeliveryFilter{Since: t0.Add(-time.Hour), Until: t0.Add(time.Hour)}},
	} {
		b.Run(bf.name, func(b *testing.B) {
			f := bf.f
			f.WorkspaceID, f.SubscriptionID, f.Before, f.Limit = "w3", benchSubscription+"3", cur, 51
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := s.ListDeliveries(b.Context(), f); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// seedDeliveryLog stores n deliveries, a second apart, with two attempts
// each.
func seedDeliveryLog(b *testing.B, s *Store, n int) {
	now := time.Now()
	for i := range benchSubscriptions {
		ws, sub := "w"+strconv.Itoa(i), benchSubscription+strconv.Itoa(i)
		if _, err := s.EnsureWorkspace(b.Context(), ws, now); err != nil {
			b.Fatal(err)
		}
		if err := s.CreateSubscription(b.Context(), store.Subscription{ID: sub, WorkspaceID: ws, Endpoint: "https://example.com/" + sub,
			Protocol: "https", EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: now},
			0, audit.Event{At: now, Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: ws,
				Entity: audit.Entity{Kind: audit.EntitySubscription, ID: sub}}); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO webhook_events (id, workspace_id, type, data, created_at, trace_parent)
			SELECT 'e' || i, 'w' || (i % 10), (ARRAY['user.delete', 'appointment.created'])[i / 10 % 2 + 1], '{}'::bytea,
				now() - i * interval '1 second', ''
			FROM generate_series(1, $1::int) AS i`,
		`INSERT INTO webhook_deliveries (id, event_id, subscription_id, status, attempts, created_at, next_attempt_at, finished_at)
			SELECT md5(i::text), 'e' || i, '` + benchSubscription + `' || (i % 10), (ARRAY['delivered', 'pending', 'failed', 'canceled'])[i % 4 + 1], 2,
				now() - i * interval '1 second', now() + interval '1 hour',
				CASE WHEN i % 4 <> 1 THEN now() END
			FROM generate_series(1, $1::int) AS i`,
		`INSERT INTO webhook_attempts (delivery_id, number, started_at, duration_us, outcome, status_code, response_body)
			SELECT md5(i::text), k, now(), 12000,
				CASE WHEN k = 2 AND i % 4 = 0 THEN 'delivered' ELSE 'http_503' END, CASE WHEN k = 2 AND i % 4 = 0 THEN 204 ELSE 503 END,
				'down for maintenance'
			FROM generate_series(1, $1::int) AS i, generate_series(1, 2) AS k`,
		`ANALYZE webhook_events`, `ANALYZE webhook_deliveries`, `ANALYZE webhook_attempts`,
	} {
		var args []any
		if q[:7] == "INSERT " {
			args = append(args, n)
		}
		if _, err := s.pool.Exec(b.Context(), q, args...); err != nil {
			b.Fatal(err)
		}
	}
}
