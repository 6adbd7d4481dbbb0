package kidregistry

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// lastUses is each kid's last use at this edge, and the last of them
// reported to the backend (planeclient.Uses).
//
// Keys.Touch, on the path of every encrypted request, stays what it was
// before the reports: a map read and an atomic store, no lock and no
// second write. What is unreported is found by the reporter instead, once
// per report, by a sweep that compares each kid's last use with the one
// it reported: the map holds a kid per key used since the edge started,
// a sweep costs the reporter 12 ms per 100,000 kids on two cores
// (BenchmarkSweep), every 5 s, and the requests nothing: sync.Map's Range
// takes no lock that a Load waits for, and Touch costs what it did
// (BenchmarkTouch, 100 ns from both cores at once, as before). A report
// that fails leaves its kids unreported, so memory holds one entry per
// kid whatever the backend does.
type lastUses struct {
	m sync.Map // kid → *lastUse
}

// lastUse is a kid's, in Unix nanoseconds.
type lastUse struct {
	at       atomic.Int64 // its last use
	reported atomic.Int64 // the last use reported, 0 before the first
}

// of returns kid's entry, made at its first use.
func (u *lastUses) of(kid string) *lastUse {
	v, ok := u.m.Load(kid)
	if !ok { // a new entry only for a kid's first use, not for every request
		v, _ = u.m.LoadOrStore(kid, new(lastUse))
	}
	return v.(*lastUse)
}

// Unreported implements planeclient.Uses.
func (u *lastUses) Unreported(n int) []contract.KidUse {
	out := []contract.KidUse{}
	u.m.Range(func(kid, v any) bool {
		if at := v.(*lastUse).at.Load(); at > v.(*lastUse).reported.Load() {
			out = append(out, contract.KidUse{Kid: kid.(string), LastUsed: time.Unix(0, at).UTC()})
		}
		return len(out) < n
	})
	return out
}

// Reported implements planeclient.Uses. Two reporters at once (while
// Caddy's config reloads, the old one's and the new one's) may mark a
// kid with the older of their uses: the kid is then reported again, which
// the backend takes as it took the first.
func (u *lastUses) Reported(uses []contract.KidUse) {
	for _, use := range uses {
		if v, ok := u.m.Load(use.Kid); ok {
			v.(*lastUse).reported.Store(use.LastUsed.UnixNano())
		}
	}
}
