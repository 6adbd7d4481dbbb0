package keyplane

import (
	"net/http/httptest"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
)

// FuzzChangesQuery reads the changes route's query: whatever it holds,
// the result is a change number of 0 or more and a wait within bounds, or
// an error.
func FuzzChangesQuery(f *testing.F) {
	for _, q := range []string{"", "after=0", "after=12&wait=25s", "after=-1", "wait=31s", "after=9223372036854775808", "wait=1h", "after=1&after=2"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest("GET", "/x", nil)
		r.URL.RawQuery = q
		after, wait, err := changesQuery(r)
		if err == nil && (after < 0 || wait < 0 || wait > contract.MaxKeyChangesWait) {
			t.Fatalf("%q gave after %d, wait %v", q, after, wait)
		}
	})
}
