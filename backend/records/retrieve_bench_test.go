package records

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/postgres"
	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
)

// keptNowhere is a trail that keeps nothing: the baseline of what the
// trail costs.
type keptNowhere struct{ store.Audit }

func (keptNowhere) AppendAudit(context.Context, audit.Event) (audit.Record, error) {
	return audit.Record{}, nil
}

// BenchmarkRetrieveAudit is what the audit trail adds to the retrieve
// route: each iteration serves one retrieval with the store's trail, as
// the backend runs, and one with a trail that keeps nothing, interleaved
// on the same store so that the machine's drift falls on both alike. It
// reports the p50 of each and their difference, added-p50-µs (the target:
// under 1000), on each engine, with the chain linked by SHA-256 (before
// the keeper) and by HMAC-SHA-256 (keyed, as the backend runs now).
//
//	go test -run '^$' -bench RetrieveAudit -benchtime 2000x ./backend/records/
func BenchmarkRetrieveAudit(b *testing.B) {
	engines := []struct {
		name string
		open func(b *testing.B) (store.Store, error)
	}{
		{"sqlite", func(b *testing.B) (store.Store, error) {
			return sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "hdc.db"))
		}},
		{"postgres", func(b *testing.B) (store.Store, error) { return postgres.Open(b.Context(), pgtest.URL(b)) }},
	}
	// The chain's links: SHA-256, as before the keeper, or HMAC-SHA-256
	// under the chain's key (package sealed keys it).
	chains := []struct {
		name  string
		chain *audit.Chain
	}{{"hashed", nil}, {"keyed", audit.NewChain([]byte("the chain's key, from the keeper"))}}
	for _, e := range engines {
		for _, c := range chains {
			b.Run(e.name+"/"+c.name, func(b *testing.B) {
				st, err := e.open(b)
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				st.KeyAudit(c.chain)
				benchRetrieveAudit(b, st)
			})
		}
	}
}

func benchRetrieveAudit(b *testing.B, st store.Store) {
	const cc = "9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"
	client := seedRecord(b, st, cc)
	handler := func(trail store.Audit) *Handler {
		h, err := New(Config{Store: st, Audit: trail, Log: zap.NewNop(), Metrics: prometheus.NewRegistry()})
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	audited, unaudited := handler(st), handler(keptNowhere{st})
	var on, off []time.Duration
	serve := func(h *Handler, into *[]time.Duration) {
		start := time.Now()
		if w := retrieveAs(h, client, cc); w.Code != 200 {
			b.Fatalf("retrieve: %d %s", w.Code, w.Body)
		}
		*into = append(*into, time.Since(start))
	}
	for b.Loop() {
		serve(audited, &on)
		serve(unaudited, &off)
	}
	p50on, p50off := median(on), median(off)
	b.ReportMetric(micros(p50on), "audited-p50-µs")
	b.ReportMetric(micros(p50off), "unaudited-p50-µs")
	b.ReportMetric(micros(p50on-p50off), "added-p50-µs")
}

// median returns the middle of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
