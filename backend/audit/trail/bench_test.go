package trail

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/postgres"
	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
)

// BenchmarkSearchNewest is the first page (50 records, the console's) of
// the search over every trail, newest first and oldest first, among N
// trails (HDC_BENCH_TRAILS, 100 by default) of 10 records each, on SQLite
// and, with HDC_TEST_POSTGRES_URL, on PostgreSQL; it reports the p50 and
// p99 of a page in ms. Newest first reads each trail's newest records (in
// one statement, store.Audit.ListAuditNewest); oldest first reads the
// first trails only.
func BenchmarkSearchNewest(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("HDC_BENCH_TRAILS")); err == nil && v > 0 {
		n = v
	}
	b.Run("sqlite", func(b *testing.B) {
		st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "hdc.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		benchSearch(b, st, n)
	})
	b.Run("postgres", func(b *testing.B) {
		st, err := postgres.Open(b.Context(), pgtest.URL(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		benchSearch(b, st, n)
	})
}

// benchSearch seeds n trails of 10 records into st and times a first page
// in each order.
func benchSearch(b *testing.B, st store.Store, n int) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range n * 10 {
		e := audit.Event{At: start.Add(time.Duration(i) * time.Second), Action: audit.LoginFailed, Outcome: audit.Denied,
			Workspace: fmt.Sprintf("w%05d", i%n)}
		if _, err := st.AppendAudit(b.Context(), e); err != nil {
			b.Fatal(err)
		}
	}
	s := New(st, Config{})
	for _, order := range []struct {
		name   string
		newest bool
	}{{"newest", true}, {"oldest", false}} {
		b.Run(order.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				t0 := time.Now()
				p, err := s.Search(b.Context(), Query{Newest: order.newest, Limit: 50})
				if err != nil || len(p.Items) != 50 {
					b.Fatalf("a page of %d, %v", len(p.Items), err)
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
