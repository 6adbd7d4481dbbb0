package admin

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
)

// DenyListTTL is how old a backend's copy of the deny-list may be: a
// revocation is in force on every backend within it.
const DenyListTTL = 2 * time.Second

// DenyList tells revoked certificates from a copy of the store's deny-list
// at most its TTL old, read again when older. It is safe for concurrent
// use.
type DenyList struct {
	st  store.Revocations
	ttl time.Duration
	now func() time.Time

	snap atomic.Pointer[denySnapshot] // nil before the first read
	mu   sync.Mutex                   // held while the list is read
}

// denySnapshot is a copy of the list, and when it was read.
type denySnapshot struct {
	serials map[string]bool
	at      time.Time
}

// NewDenyList returns a DenyList over st.
func NewDenyList(st store.Revocations, ttl time.Duration) *DenyList {
	return &DenyList{st: st, ttl: ttl, now: time.Now}
}

// Errors of Check: the problems it answers.
var (
	errRevoked = problem.New(http.StatusForbidden, problem.CodeForbidden, "this certificate is revoked")
	errNoList  = problem.New(http.StatusServiceUnavailable, problem.CodeNotReady, "the list of revoked certificates cannot be read: try again")
)

// Check returns the problem answering r when its client certificate, of
// the hop's authority, is revoked (403), or when the list was never read
// and cannot be (503: it fails closed); nil otherwise, and for a request without a
// verified certificate, which the routes refuse or serve by themselves.
func (d *DenyList) Check(r *http.Request) *problem.Problem {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil
	}
	revoked, err := d.Revoked(r.Context(), r.TLS.VerifiedChains[0][0].SerialNumber.Text(16))
	switch {
	case err != nil:
		return errNoList
	case revoked:
		return errRevoked
	}
	return nil
}

// Revoked reports whether serial (lower-case hex) is on the list. Checks
// read the copy without a lock; one at a time reads the list again.
func (d *DenyList) Revoked(ctx context.Context, serial string) (bool, error) {
	if snap := d.fresh(); snap != nil {
		return snap.serials[serial], nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if snap := d.fresh(); snap != nil { // another check read it meanwhile
		return snap.serials[serial], nil
	}
	list, err := d.st.RevokedCertificates(ctx)
	if err != nil {
		// The list cannot change while the store does not answer, but
		// for a backend cut off from a store the others reach: the last
		// copy serves for another TTL. With none, it fails closed.
		if last := d.snap.Load(); last != nil {
			d.snap.Store(&denySnapshot{serials: last.serials, at: d.now()})
			return last.serials[serial], nil
		}
		return false, err
	}
	snap := &denySnapshot{serials: make(map[string]bool, len(list)), at: d.now()}
	for _, c := range list {
		snap.serials[c.Serial] = true
	}
	d.snap.Store(snap)
	return snap.serials[serial], nil
}

// fresh returns the copy of the list when it is younger than the TTL.
func (d *DenyList) fresh() *denySnapshot {
	snap := d.snap.Load()
	if snap == nil {
		return nil
	}
	if age := d.now().Sub(snap.at); age < 0 || age >= d.ttl {
		return nil
	}
	return snap
}

// Forget makes the next check read the list: after a revocation made on
// this backend, which is then in force here at once.
func (d *DenyList) Forget() { d.snap.Store(nil) }
