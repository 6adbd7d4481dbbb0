package retention

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/prometheus/client_golang/prometheus"
)

const retentionClient = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"

// seedTrails appends to ws and to the installation's trail one event per
// entry of ages, each that long before now.
func seedTrails(t *testing.T, st store.Audit, now time.Time, ages ...time.Duration) {
	t.Helper()
	for _, age := range ages {
		for _, e := range []audit.Event{
			{At: now.Add(-age), Action: audit.Login, Outcome: audit.Success, Workspace: "acme", Client: retentionClient},
			{At: now.Add(-age), Action: audit.LoginFailed, Outcome: audit.Denied},
		} {
			if _, err := st.AppendAudit(context.Background(), e); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// trail returns the records of ws and verifies its chain.
func trail(t *testing.T, st store.Audit, ws string) []audit.Record {
	t.Helper()
	heads, err := st.AuditHeads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range heads {
		if h.Workspace == ws {
			if err := store.VerifyAudit(context.Background(), st, h, store.AuditCheck{}); err != nil {
				t.Fatalf("the trail of %q does not verify: %v", ws, err)
			}
		}
	}
	rs, err := st.ListAudit(context.Background(), store.AuditFilter{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestAuditRetentionPrune: a run removes, in every trail, the installation's
// included, the records older than the retention and records the prune; a
// later run with nothing expired removes and records nothing; a retention
// of 0 removes nothing.
func TestAuditRetentionPrune(t *testing.T) {
	tests := []struct {
		name      string
		retention time.Duration
		ages      []time.Duration // of the seeded records, per trail
		advance   time.Duration   // the clock moves on this much before the run
		removed   int64           // in both trails together
		kept      int             // records left per trail, the prune's included
	}{
		{"expired prefix", time.Hour, []time.Duration{3 * time.Hour, 2 * time.Hour, 30 * time.Minute}, 0, 4, 2},
		{"nothing expired", time.Hour, []time.Duration{30 * time.Minute, 10 * time.Minute}, 0, 0, 2},
		{"all expired later", time.Hour, []time.Duration{30 * time.Minute, 10 * time.Minute}, 2 * time.Hour, 4, 1},
		{"0 keeps them", 0, []time.Duration{3 * time.Hour}, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			clock := testkit.NewClock(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC))
			seedTrails(t, st, clock.Now(), tt.ages...)
			clock.Advance(tt.advance)
			j, err := New(st, tt.retention, zaptest.NewLogger(t), prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			j.now = clock.Now
			var n int64
			if tt.retention > 0 {
				n = j.prune(t.Context())
			} else {
				j.Run(t.Context()) // returns at once
			}
			if n != tt.removed {
				t.Errorf("removed %d records, want %d", n, tt.removed)
			}
			for _, ws := range []string{"acme", ""} {
				rs := trail(t, st, ws)
				if len(rs) != tt.kept {
					t.Fatalf("trail %q keeps %d records, want %d: %+v", ws, len(rs), tt.kept, rs)
				}
				last := rs[len(rs)-1]
				if tt.removed > 0 && (last.Action != audit.RetentionPrune || !last.At.Equal(clock.Now()) || last.Workspace != ws) {
					t.Errorf("trail %q ends with %+v, want the prune at %v", ws, last, clock.Now())
				}
				if tt.removed == 0 && last.Action == audit.RetentionPrune {
					t.Errorf("trail %q records a prune that removed nothing", ws)
				}
			}
			// Run again at once: nothing more is expired.
			if tt.retention > 0 {
				if n := j.prune(t.Context()); n != 0 {
					t.Errorf("a second run removed %d records", n)
				}
			}
		})
	}
}
