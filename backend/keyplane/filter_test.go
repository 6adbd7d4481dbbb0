package keyplane

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/kidfilter"
)

// TestFilter: the filter holds every kid there is, changed ones too, over
// several of its build's pages, and says the newest change it covers.
func TestFilter(t *testing.T) {
	srv, st := plane(t)
	fetch := func() (*kidfilter.Filter, int64) {
		var w contract.KeyFilter
		if status := get(t, srv.URL+contract.PathKeyFilter, &w); status != http.StatusOK {
			t.Fatalf("the filter: %d", status)
		}
		f, err := kidfilter.FromWire(w)
		if err != nil {
			t.Fatal(err)
		}
		return f, w.Last
	}
	if f, last := fetch(); last != 0 || f.MayHold("k0") {
		t.Fatalf("the filter of no keys covers change %d", last)
	}
	n := testFilterPage + 5
	for i := range n {
		addKey(t, st, fmt.Sprint("k", i))
	}
	if _, err := st.RetireClientKey(t.Context(), "k3", true, t0, audit.Event{At: t0, Action: audit.KeyRetire, Outcome: audit.Success,
		Entity: audit.Entity{Kind: audit.EntityKey, ID: "k3"}}); err != nil {
		t.Fatal(err)
	}
	f, last := fetch()
	if last != int64(n+1) {
		t.Fatalf("the filter covers change %d, want %d", last, n+1)
	}
	for i := range n {
		if !f.MayHold(fmt.Sprint("k", i)) {
			t.Fatalf("k%d is not in the filter", i)
		}
	}
	// Its false positives, at 1% by design: 2% of many absent kids.
	absent, probes := 0, 10_000
	for i := range probes {
		if f.MayHold(fmt.Sprint("absent", i)) {
			absent++
		}
	}
	if absent > probes/50 {
		t.Fatalf("%d of %d absent kids pass the filter", absent, probes)
	}
}
