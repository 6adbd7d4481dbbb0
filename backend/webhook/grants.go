package webhook

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// GrantsTTL is how old a backend's copy of the grants may be: a
// revocation made on another backend, or in the database directly, is in
// force on every backend's deliveries within it. (A grant is at once: a
// delivery the copy refuses reads the grants afresh.)
const GrantsTTL = 2 * time.Second

// GrantStore is what Grants reads: the destinations granted, and the
// backends' heartbeats, whose internal listeners no webhook reaches.
type GrantStore interface {
	ListDestinations(ctx context.Context, f store.DestinationFilter) ([]store.WebhookDestination, error)
	ListBackends(ctx context.Context) ([]store.FleetBackend, error)
}

// Grants is a copy of the destinations in force, by workspace, and of the
// fleet's backends' internal listeners, at most its TTL old, read again
// when older. It is safe for concurrent use.
type Grants struct {
	st  GrantStore
	ttl time.Duration
	now func() time.Time

	snap atomic.Pointer[grantSnapshot] // nil before the first read
	mu   sync.Mutex                    // held while the store is read
}

// grantSnapshot is a copy of the grants in force and the backends'
// internal listeners, and when it was read.
type grantSnapshot struct {
	byWorkspace map[string][]Destination
	backends    []Destination
	at          time.Time
}

// NewGrants returns the Grants over st whose copy lives ttl.
func NewGrants(st GrantStore, ttl time.Duration) *Grants {
	return &Grants{st: st, ttl: ttl, now: time.Now}
}

// Forget makes the next check read the store: after a change made on this
// backend, which is then in force here at once.
func (g *Grants) Forget() { g.snap.Store(nil) }

// read returns the destinations in force of workspace, from the store.
func (g *Grants) read(ctx context.Context, workspace string) ([]Destination, error) {
	list, err := g.st.ListDestinations(ctx, store.DestinationFilter{WorkspaceID: workspace, InForce: true})
	if err != nil {
		return nil, err
	}
	out := make([]Destination, 0, len(list))
	for _, d := range list {
		out = append(out, Destination{Prefix: d.Prefix, Port: d.Port})
	}
	return out, nil
}

// snapshot returns the copy, read again when it is TTL old. A store that
// does not answer leaves the last copy in use for another TTL; with none,
// the error: nothing is admitted on a guess.
func (g *Grants) snapshot(ctx context.Context) (*grantSnapshot, error) {
	if s := g.fresh(); s != nil {
		return s, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.fresh(); s != nil { // another check read it meanwhile
		return s, nil
	}
	s, err := g.load(ctx)
	if err != nil {
		last := g.snap.Load()
		if last == nil {
			return nil, err
		}
		s = &grantSnapshot{byWorkspace: last.byWorkspace, backends: last.backends}
	}
	s.at = g.now()
	g.snap.Store(s)
	return s, nil
}

// load reads the grants in force and the backends' listeners.
func (g *Grants) load(ctx context.Context) (*grantSnapshot, error) {
	list, err := g.st.ListDestinations(ctx, store.DestinationFilter{InForce: true})
	if err != nil {
		return nil, err
	}
	s := &grantSnapshot{byWorkspace: map[string][]Destination{}}
	for _, d := range list {
		s.byWorkspace[d.WorkspaceID] = append(s.byWorkspace[d.WorkspaceID], Destination{Prefix: d.Prefix, Port: d.Port})
	}
	backends, err := g.st.ListBackends(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range backends {
		// A listener bound to every address names no host to refuse: the
		// backend's own refuses its host's addresses (ListenerDestinations).
		if ap, err := netip.ParseAddrPort(b.Address); err == nil && !ap.Addr().IsUnspecified() {
			a := ap.Addr().Unmap()
			s.backends = append(s.backends, Destination{Prefix: netip.PrefixFrom(a, a.BitLen()), Port: ap.Port()})
		}
	}
	return s, nil
}

// fresh returns the copy when it is younger than the TTL.
func (g *Grants) fresh() *grantSnapshot {
	s := g.snap.Load()
	if s == nil {
		return nil
	}
	if age := g.now().Sub(s.at); age < 0 || age >= g.ttl {
		return nil
	}
	return s
}
