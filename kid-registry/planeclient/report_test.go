package planeclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/hopclient"
)

// fakeUses is Uses over a map: each kid's last use, and the one reported.
type fakeUses struct {
	mu             sync.Mutex
	used, reported map[string]time.Time
}

func newUses() *fakeUses {
	return &fakeUses{used: map[string]time.Time{}, reported: map[string]time.Time{}}
}

func (u *fakeUses) use(kid string, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.used[kid] = at
}

func (u *fakeUses) Unreported(n int) []contract.KidUse {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []contract.KidUse
	for _, kid := range slices.Sorted(maps.Keys(u.used)) {
		if at := u.used[kid]; at.After(u.reported[kid]) && len(out) < n {
			out = append(out, contract.KidUse{Kid: kid, LastUsed: at})
		}
	}
	return out
}

func (u *fakeUses) Reported(uses []contract.KidUse) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, use := range uses {
		u.reported[use.Kid] = use.LastUsed
	}
}

// kidsOf returns the kids of reports, in order, each as kid@seconds after
// t0.
func kidsOf(reports []contract.EdgeReport) []string {
	var out []string
	for _, r := range reports {
		for _, u := range r.Uses {
			out = append(out, fmt.Sprintf("%s@%d", u.Kid, int(u.LastUsed.Sub(t0).Seconds())))
		}
	}
	return out
}

// TestReportKeepsUsesUntilTaken reports step by step: a report the
// backend does not take keeps its uses for the next, which sends each
// once, with its latest use; a report with nothing to say still reports.
func TestReportKeepsUsesUntilTaken(t *testing.T) {
	t.Parallel()
	b, srv := newBackend(t)
	s, _ := newSource(t, srv, Config{})
	uses := newUses()
	steps := []struct {
		name    string
		used    []string // kids used, at the step's second
		down    bool
		ok      bool
		reports int      // the reports the backend took, in all
		kids    []string // the uses of the step's reports
	}{
		{"nothing used", nil, false, true, 1, nil},
		{"k1 and k2, the backend down", []string{"k1", "k2"}, true, false, 1, nil},
		{"k1 again, the backend still down", []string{"k1"}, true, false, 1, nil},
		{"the backend back", nil, false, true, 2, []string{"k1@2", "k2@1"}},
		{"nothing new", nil, false, true, 3, nil},
		{"k2 again", []string{"k2"}, false, true, 4, []string{"k2@5"}},
	}
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			for _, kid := range st.used {
				uses.use(kid, t0.Add(time.Duration(i)*time.Second))
			}
			b.Down.Store(st.down)
			before := len(b.Reports())
			if err := s.reportUses(t.Context(), uses); (err == nil) != st.ok {
				t.Fatalf("reportUses = %v, want success %v", err, st.ok)
			}
			reports := b.Reports()
			if len(reports) != st.reports || !slices.Equal(kidsOf(reports[before:]), st.kids) {
				t.Fatalf("%d reports, the last ones with %v; want %d, with %v", len(reports), kidsOf(reports[before:]), st.reports, st.kids)
			}
			for _, r := range reports {
				if r.Instance != s.id || !contract.IsUUID(r.Instance) {
					t.Fatalf("a report of instance %q, want %q", r.Instance, s.id)
				}
			}
		})
	}
}

// TestReportInBatches: more unreported kids than a report carries go in
// as many reports as needed, at once.
func TestReportInBatches(t *testing.T) {
	t.Parallel()
	b, srv := newBackend(t)
	s, _ := newSource(t, srv, Config{})
	uses := newUses()
	n := 2*contract.MaxEdgeReportUses + 1
	for i := range n {
		uses.use(fmt.Sprintf("k%05d", i), t0)
	}
	if err := s.reportUses(t.Context(), uses); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range b.Reports() {
		sizes = append(sizes, len(r.Uses))
	}
	if want := []int{contract.MaxEdgeReportUses, contract.MaxEdgeReportUses, 1}; !slices.Equal(sizes, want) {
		t.Fatalf("reports of %v uses, want %v", sizes, want)
	}
}

// runReport runs s.Report until the returned function stops it, and
// waits for it to return.
func runReport(s *Source, uses Uses) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Report(ctx, uses); close(done) }()
	return func() { cancel(); <-done }
}

// TestReportRuns runs Report at a short interval beside the feed: the
// reports carry the uses and the number the feed applied.
func TestReportRuns(t *testing.T) {
	t.Parallel()
	b, srv := newBackend(t)
	set(b, "k1", "active")
	set(b, "k2", "active")
	s, rec := newSource(t, srv, Config{ReportEvery: 10 * time.Millisecond})
	running(t, s, rec)
	uses := newUses()
	uses.use("k1", t0)
	defer runReport(s, uses)()
	eventually(t, "a report of k1 and the applied number", func() bool {
		rs := b.Reports()
		return slices.Contains(kidsOf(rs), "k1@0") && rs[len(rs)-1].AppliedSeq == 2
	})
	uses.use("k1", t0.Add(time.Second))
	eventually(t, "a report of k1's next use", func() bool { return slices.Contains(kidsOf(b.Reports()), "k1@1") })
	if kids := kidsOf(b.Reports()); !slices.Equal(kids, []string{"k1@0", "k1@1"}) {
		t.Fatalf("reported %v, want each use once", kids)
	}
}

// TestReportAtStop: Report, when it stops, reports what was used since
// its last report, long before its next would have.
func TestReportAtStop(t *testing.T) {
	t.Parallel()
	b, srv := newBackend(t)
	s, _ := newSource(t, srv, Config{ReportEvery: time.Hour})
	uses := newUses()
	uses.use("k1", t0)
	runReport(s, uses)()
	if kids := kidsOf(b.Reports()); !slices.Equal(kids, []string{"k1@0"}) {
		t.Fatalf("reported %v, want k1", kids)
	}
}

// TestReportFailsOver: a report is repeatable, so that the hop's client
// sends it whole to the next backend when the first took it and answered
// 5xx (a request that is not marked stays with the first).
func TestReportFailsOver(t *testing.T) {
	t.Parallel()
	var firstGot atomic.Int32
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		firstGot.Add(1)
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(first.Close)
	got := make(chan contract.EdgeReport, 1)
	next := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var report contract.EdgeReport
		if err := json.NewDecoder(r.Body).Decode(&report); err != nil {
			t.Errorf("the next backend got %s %s: %v", r.Method, r.URL.Path, err)
		}
		got <- report
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(next.Close)
	tr, err := hopclient.New(http.DefaultTransport, []string{first.URL, next.URL}, hopclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := &client{base: tr.URL(""), http: &http.Client{Transport: tr}}
	want := contract.EdgeReport{Instance: "0f8fad5b-d9cb-469f-a165-70867728950e", AppliedSeq: 7,
		Uses: []contract.KidUse{{Kid: "k1", LastUsed: t0}}}
	if err := c.report(t.Context(), want); err != nil {
		t.Fatalf("report: %v", err)
	}
	if r := <-got; r.Instance != want.Instance || r.AppliedSeq != 7 || len(r.Uses) != 1 || !r.Uses[0].LastUsed.Equal(t0) || firstGot.Load() != 1 {
		t.Fatalf("the next backend got %+v after %d at the first; want %+v after one", r, firstGot.Load(), want)
	}
}
