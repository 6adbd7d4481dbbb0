package opscmd

import (
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
)

// FuzzParseRate: whatever the flag, parseRate returns a rate that the
// Admin API's SetClientLimits takes (contract.Limits.Check), or an error.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"writes=100:20", "reads=none", "login=0.5:1", "uploads=1e9:1", "x=1:1", "reads=NaN:1", "reads=:", "="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		class, r, err := parseRate(s)
		if err != nil {
			return
		}
		if err := (contract.Limits{Rates: map[contract.RouteClass]contract.Rate{class: r}}).Check(); err != nil {
			t.Fatalf("parseRate(%q) = %s %+v, which Check refuses: %v", s, class, r, err)
		}
	})
}
