package kidregistry

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/internal/testkit/fakeplane"
)

// TestLastUses: a kid is unreported from its use until that use is
// marked reported, and again once used after it; the sweep returns at
// most what it is asked for.
func TestLastUses(t *testing.T) {
	t.Parallel()
	var u lastUses
	var pending []contract.KidUse // the last sweep's
	steps := []struct {
		name   string
		used   map[string]int64 // kid → its use, Unix nanoseconds
		report bool             // mark the last sweep's uses reported first
		n      int              // the sweep's bound
		want   []string         // kid@use, sorted
	}{
		{"nothing used", nil, false, 10, nil},
		{"two kids used", map[string]int64{"k1": 1, "k2": 2}, false, 10, []string{"k1@1", "k2@2"}},
		{"a failed report changes nothing", nil, false, 10, []string{"k1@1", "k2@2"}},
		{"k1 used again before the report", map[string]int64{"k1": 3}, false, 10, []string{"k1@3", "k2@2"}},
		{"reported", nil, true, 10, nil},
		{"k2 used again", map[string]int64{"k2": 4}, false, 10, []string{"k2@4"}},
		{"k1 and k3 used, a sweep of one", map[string]int64{"k1": 5, "k3": 5}, true, 1, nil}, // one of the two, checked below
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.report {
				u.Reported(pending)
			}
			for kid, at := range st.used {
				u.of(kid).at.Store(at)
			}
			pending = u.Unreported(st.n)
			var got []string
			for _, p := range pending {
				got = append(got, fmt.Sprintf("%s@%d", p.Kid, p.LastUsed.UnixNano()))
			}
			slices.Sort(got)
			if st.n == 1 {
				if len(got) != 1 || !slices.Contains([]string{"k1@5", "k3@5"}, got[0]) {
					t.Fatalf("a sweep of one: %v", got)
				}
				return
			}
			if !slices.Equal(got, st.want) {
				t.Fatalf("unreported %v, want %v", got, st.want)
			}
		})
	}
}

// TestKeysReportTheirUses: the keys of the key plane report their uses
// to the backend at their interval, with the edge's instance id; a kid's
// last use stays what Touch returned.
func TestKeysReportTheirUses(t *testing.T) {
	t.Parallel()
	b := fakeplane.NewKeyPlane()
	b.Set("k1", "c1", "0123456789abcdef", "active")
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	keys, err := FollowPlane(PlaneConfig{URL: srv.URL, Client: srv.Client(), ReportEvery: 10 * time.Millisecond, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { keys.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	used := keys.Touch("k1")
	testkit.Eventually(t, 10*time.Second, "a report of k1", func() bool {
		for _, r := range b.Reports() {
			if contract.IsUUID(r.Instance) && slices.ContainsFunc(r.Uses, func(u contract.KidUse) bool { return u.Kid == "k1" && u.LastUsed.Equal(used) }) {
				return true
			}
		}
		return false
	})
	if got := keys.LastUse("k1"); !got.Equal(used) {
		t.Fatalf("LastUse = %v, want %v", got, used)
	}
}

// BenchmarkTouch is the cost of recording a use, on the path of every
// encrypted request, from every core at once.
func BenchmarkTouch(b *testing.B) {
	keys := newKeys(nil)
	kids := make([]string, 1000)
	for i := range kids {
		kids[i] = fmt.Sprint("k", i)
		keys.Touch(kids[i])
	}
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			keys.Touch(kids[i%len(kids)])
		}
	})
}

// BenchmarkSweep is the reporter's sweep of 100,000 kids, a hundred of
// them unreported: every kid is looked at.
func BenchmarkSweep(b *testing.B) {
	var u lastUses
	for i := range 100_000 {
		e := u.of(strings.Repeat("k", 20) + fmt.Sprint(i))
		e.at.Store(int64(i + 1))
		if i%1000 != 0 {
			e.reported.Store(int64(i + 1))
		}
	}
	for b.Loop() {
		u.Unreported(contract.MaxEdgeReportUses)
	}
}
