package storetest

import (
	"errors"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// Ids of the destinations test.
const (
	destination1 = "3b0e6f4a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
	destination2 = "4c1f7a5b-2d3e-4f60-9b0c-1d2e3f4a5b6c"
	destination3 = "5d2a8b6c-3e4f-4a71-8c1d-2e3f4a5b6c7d"
	destination4 = "6e3b9c7d-4f5a-4b82-9d2e-3f4a5b6c7d8e"
)

// destination is operatorAlice's grant id of prefix and port to ws, d
// after t0, and its record.
func destination(id, ws, prefix string, port uint16, d time.Duration) (store.WebhookDestination, audit.Event) {
	return store.WebhookDestination{ID: id, WorkspaceID: ws, Prefix: netip.MustParsePrefix(prefix), Port: port,
			CreatedAt: at(d), CreatedBy: operatorAlice.Name},
		destinationEvent(audit.DestinationGrant, id, ws, d)
}

// destinationEvent is operatorAlice's record of action on grant id of ws,
// d after t0.
func destinationEvent(action audit.Action, id, ws string, d time.Duration) audit.Event {
	return audit.Event{At: at(d), Action: action, Outcome: audit.Success, Workspace: ws,
		Entity: audit.Entity{Kind: audit.EntityDestination, ID: id}, Person: operatorAlice}
}

// testDestinations: grants are listed by workspace in creation order, in
// force or all; one prefix and port is granted once per workspace while
// in force, to any number of workspaces; a revocation keeps its first
// time and person, and its grant's row; an unknown workspace or grant is
// not found, and a change whose record cannot be written is not made.
func testDestinations(t *testing.T, s Store) {
	for _, ws := range []string{"w1", "w2"} {
		_, err := s.EnsureWorkspace(ctx(t), ws, at(0))
		must(t, err)
	}
	d1, e1 := destination(destination1, "w1", "10.0.0.31/32", 9999, time.Second)
	d2, e2 := destination(destination2, "w1", "10.1.2.0/24", 0, 2*time.Second)
	d3, e3 := destination(destination3, "w2", "10.0.0.31/32", 9999, 3*time.Second)
	for _, g := range []struct {
		d store.WebhookDestination
		e audit.Event
	}{{d1, e1}, {d2, e2}, {d3, e3}} {
		must(t, s.GrantDestination(ctx(t), g.d, g.e))
	}
	twice, e := destination(destination4, "w1", "10.0.0.31/32", 9999, 4*time.Second)
	wantErr(t, s.GrantDestination(ctx(t), twice, e), store.ErrConflict)
	nowhere, e := destination(destination4, "w9", "10.0.0.31/32", 9999, 4*time.Second)
	e.Workspace = "w1"
	wantErr(t, s.GrantDestination(ctx(t), nowhere, e), store.ErrNotFound)
	unrecorded, e := destination(destination4, "w1", "192.168.0.0/16", 0, 4*time.Second)
	wantAppendFailed(t, s.GrantDestination(ctx(t), unrecorded, unrecordable(e)))

	list := func(f store.DestinationFilter) []store.WebhookDestination {
		t.Helper()
		l, err := s.ListDestinations(ctx(t), f)
		must(t, err)
		return l
	}
	if got := list(store.DestinationFilter{WorkspaceID: "w1"}); !slices.Equal(got, []store.WebhookDestination{d1, d2}) {
		t.Fatalf("w1's grants = %+v, want %+v", got, []store.WebhookDestination{d1, d2})
	}
	if got := list(store.DestinationFilter{}); len(got) != 3 || got[2] != d3 {
		t.Fatalf("every grant = %+v", got)
	}
	_, err := s.RevokeDestination(ctx(t), "w2", destination1, operatorAlice.Name, destinationEvent(audit.DestinationRevoke, destination1, "w2", 5*time.Second))
	wantErr(t, err, store.ErrNotFound)
	revoked, err := s.RevokeDestination(ctx(t), "w1", destination1, operatorAlice.Name, destinationEvent(audit.DestinationRevoke, destination1, "w1", 5*time.Second))
	must(t, err)
	want := d1
	want.RevokedAt, want.RevokedBy = at(5*time.Second), operatorAlice.Name
	if revoked != want {
		t.Fatalf("revoked %+v, want %+v", revoked, want)
	}
	again, err := s.RevokeDestination(ctx(t), "w1", destination1, "bob@example.org", destinationEvent(audit.DestinationRevoke, destination1, "w1", 6*time.Second))
	if err != nil || again != want {
		t.Fatalf("revoked again: %+v, %v; want the first revocation kept", again, err)
	}
	if got := list(store.DestinationFilter{WorkspaceID: "w1", InForce: true}); !slices.Equal(got, []store.WebhookDestination{d2}) {
		t.Fatalf("w1's grants in force = %+v", got)
	}
	if got := list(store.DestinationFilter{WorkspaceID: "w1"}); len(got) != 2 || got[0] != want {
		t.Fatalf("w1's grants after the revocation = %+v", got)
	}
	// Revoked, the prefix and port may be granted again.
	must(t, s.GrantDestination(ctx(t), twice, destinationEvent(audit.DestinationGrant, destination4, "w1", 7*time.Second)))
	wantTrail(t, s, "w1", 0, audit.DestinationGrant, audit.DestinationGrant, audit.DestinationRevoke, audit.DestinationRevoke,
		audit.DestinationGrant)
}

// testDestinationConcurrentGrants: of concurrent grants of one prefix and
// port to one workspace, on every connection, one is made.
func testDestinationConcurrentGrants(t *testing.T, s Store) {
	_, err := s.EnsureWorkspace(ctx(t), "w1", at(0))
	must(t, err)
	var made, conflicts atomic.Int64
	var wg sync.WaitGroup
	for i, id := range []string{destination1, destination2, destination3, destination4} {
		wg.Go(func() {
			d, e := destination(id, "w1", "fd00:1::/64", 443, time.Duration(i)*time.Second)
			switch err := s.GrantDestination(ctx(t), d, e); {
			case err == nil:
				made.Add(1)
			case errors.Is(err, store.ErrConflict):
				conflicts.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if made.Load() != 1 || conflicts.Load() != 3 {
		t.Fatalf("%d grants made, %d conflicts; want 1 and 3", made.Load(), conflicts.Load())
	}
}
