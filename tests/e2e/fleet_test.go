package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/fleet"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// lastUseBound is how long after an encrypted request the store may take
// to know of its use: the edges' report interval (contract.EdgeReportEvery,
// 5 s), once over, with room for a loaded machine.
const lastUseBound = 2 * contract.EdgeReportEvery

// TestKeyLastUseFleetWide: two edges in front of the backend, the real
// programs. In each round a key is used through one edge and then at once
// through the other; within lastUseBound the store holds the later use as
// the key's last use, and it still does once both edges have reported
// again, whichever reported last. The backend lists both edges, caught up
// with the key plane, by the instance ids their logs name and their
// certificates' names, and itself.
func TestKeyLastUseFleetWide(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	second, _ := s.StartEdge("edge-2")
	c := s.NewClient("fleet") // both edges hold the key
	tk := s.Login(c, false, "")
	st := s.OpenStore()
	view := fleet.New(st, fleet.DefaultForgetAfter)
	edges := []string{s.Edge, second}
	var slowest time.Duration
	for round := range 4 {
		order := edges
		if round%2 == 1 {
			order = []string{second, s.Edge}
		}
		if status := s.EncryptedStatusAt(order[0], c, tk); status != 200 {
			t.Fatalf("round %d: the first edge answered %d", round, status)
		}
		before := time.Now()
		if status := s.EncryptedStatusAt(order[1], c, tk); status != 200 {
			t.Fatalf("round %d: the second edge answered %d", round, status)
		}
		after := time.Now()
		seen := waitForLastUse(t, st, c.Kid, before, after)
		slowest = max(slowest, seen.Sub(after))
		waitForReports(t, view, after)
		if used := lastUse(t, st, c.Kid); used.Before(before) || used.After(after) {
			t.Fatalf("round %d: once both edges reported, the key's last use is %v, want the later use, within [%v, %v]", round, used, before, after)
		}
	}
	t.Logf("the later use of each round reached the store within %v of its answer (bound %v)", slowest, lastUseBound)
	checkFleet(t, s, view, hdctest.KeySeq(t, s, c.Kid))
	// hdc keys retire --dry-run says when an edge last used the key, as the
	// runbook asks before a retirement.
	var dry struct {
		DryRun     bool       `json:"dry_run"`
		LastUsedAt *time.Time `json:"last_used_at"`
	}
	s.HDC(&dry, "keys", "retire", "--kid", c.Kid, "--force", "--dry-run")
	if used := lastUse(t, st, c.Kid); !dry.DryRun || dry.LastUsedAt == nil || !dry.LastUsedAt.Equal(used) {
		t.Fatalf("hdc keys retire --dry-run printed %+v, want the last use %v", dry, used)
	}
}

// lastUse returns kid's last use as the store keeps it.
func lastUse(t *testing.T, st store.Store, kid string) time.Time {
	t.Helper()
	k, err := st.ClientKey(context.Background(), kid)
	if err != nil {
		t.Fatal(err)
	}
	return k.LastUsedAt
}

// waitForLastUse waits, up to lastUseBound after the request that ended at
// after, until the store holds a use of kid from before on, and returns
// when it saw it.
func waitForLastUse(t *testing.T, st store.Store, kid string, before, after time.Time) time.Time {
	t.Helper()
	for !lastUse(t, st, kid).After(before) {
		if time.Since(after) > lastUseBound {
			t.Fatalf("the key's last use is %v, %v after a use at %v", lastUse(t, st, kid), time.Since(after), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Now()
}

// waitForReports waits until every edge has reported since since.
func waitForReports(t *testing.T, view *fleet.Service, since time.Time) {
	t.Helper()
	testkit.Eventually(t, lastUseBound, "a report of each edge", func() bool {
		edges, err := view.Edges(context.Background())
		return err == nil && len(edges) == 2 && !slices.ContainsFunc(edges, func(e fleet.Edge) bool { return e.LastContact.Before(since) })
	})
}

// checkFleet checks the fleet the backend sees: both edges current,
// caught up with the key plane's newest number, named by their
// certificates and by the instance ids their logs name; the backend
// current.
func checkFleet(t *testing.T, s *hdctest.Stack, view *fleet.Service, newest int) {
	t.Helper()
	edges, err := view.Edges(context.Background())
	if err != nil || len(edges) != 2 {
		t.Fatalf("Edges = %+v, %v", edges, err)
	}
	names := map[string]string{"hdc-edge": "hdc-edge", "edge-2": "hdc-edge-2"} // certificate → process
	for _, e := range edges {
		proc, ok := names[e.Name]
		if !ok || !e.Current || e.Lag != 0 || e.AppliedSeq != int64(newest) || e.Serial == "" || e.Source != "127.0.0.1" {
			t.Errorf("the edge %+v", e)
			continue
		}
		if !strings.Contains(s.Output(proc), e.ID) {
			t.Errorf("%s's log does not name its instance id %s", proc, e.ID)
		}
	}
	backends, err := view.Backends(context.Background())
	if err != nil || len(backends) != 1 || !backends[0].Current || backends[0].Version == "" || !strings.HasSuffix(s.Internal, backends[0].Address) {
		t.Fatalf("Backends = %+v, %v; want the stack's, current, at %s", backends, err, s.Internal)
	}
}
