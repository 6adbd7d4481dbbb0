package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// testFleetBackends: a heartbeat inserts its backend's row, the next one
// replaces it, a backend's first heartbeat removes the row of an earlier
// one at its host and address, and the rows not seen since a time are
// forgotten.
func testFleetBackends(t *testing.T, s Store) {
	b1 := store.FleetBackend{ID: "b1", Host: "host-1", Version: "v1.2.0", Address: "10.0.0.1:8444", StartedAt: at(0), LastSeen: at(0)}
	b2 := store.FleetBackend{ID: "b2", Host: "host-2", Version: "v1.2.0", Address: "10.0.0.2:8444", StartedAt: at(time.Second), LastSeen: at(time.Second)}
	killed := store.FleetBackend{ID: "b0", Host: "host-1", Version: "v1.2.0", Address: "10.0.0.1:8444", StartedAt: at(-time.Hour), LastSeen: at(-time.Second)}
	sameAddress := store.FleetBackend{ID: "b3", Host: "host-3", Version: "v1.2.0", Address: "10.0.0.1:8444", StartedAt: at(0), LastSeen: at(0)}
	for _, b := range []store.FleetBackend{killed, sameAddress, b2, b1} {
		must(t, s.BeatBackend(ctx(t), b))
	}
	b1.LastSeen, b1.Version = at(time.Minute), "v1.3.0"
	must(t, s.BeatBackend(ctx(t), b1))
	got, err := s.ListBackends(ctx(t))
	must(t, err)
	if want := []store.FleetBackend{b1, b2, sameAddress}; !slices.EqualFunc(got, want, sameBackend) {
		t.Fatalf("ListBackends = %+v, want %+v: the killed backend's row replaced by b1's, another host's at the same address kept", got, want)
	}
	n, err := s.ForgetFleet(ctx(t), at(time.Minute))
	must(t, err)
	got, err = s.ListBackends(ctx(t))
	must(t, err)
	if n != 2 || len(got) != 1 || got[0].ID != "b1" {
		t.Fatalf("after forgetting those not seen since a minute: %d removed, %+v left", n, got)
	}
}

func sameBackend(a, b store.FleetBackend) bool {
	return a.ID == b.ID && a.Host == b.Host && a.Version == b.Version && a.Address == b.Address &&
		a.StartedAt.Equal(b.StartedAt) && a.LastSeen.Equal(b.LastSeen)
}

// testFleetEdges: an edge's report inserts or replaces its row, by its
// instance id, under the certificate's name that reported it first (a
// renewed certificate goes on with it; another name's report is refused
// and changes nothing); a new instance of a name from the address of
// another replaces it, from another address it is another edge; old rows
// are forgotten.
func testFleetEdges(t *testing.T, s Store) {
	e1 := store.FleetEdge{ID: "e1", Name: "edge-1", Serial: "0a1b", AppliedSeq: 3, LastContact: at(0), Source: "10.0.1.1"}
	e2 := store.FleetEdge{ID: "e2", Name: "edge-2", Serial: "0e3f", AppliedSeq: 3, LastContact: at(time.Second), Source: "10.0.1.2"}
	for _, e := range []store.FleetEdge{e2, e1} {
		must(t, s.ReportEdge(ctx(t), e, nil))
	}
	e1.Serial, e1.AppliedSeq, e1.LastContact = "0c2d", 5, at(3*time.Second) // renewed
	must(t, s.ReportEdge(ctx(t), e1, nil))
	claimed := store.FleetEdge{ID: "e1", Name: "edge-2", Serial: "0e3f", AppliedSeq: 9, LastContact: at(4 * time.Second), Source: "10.0.1.1"}
	if err := s.ReportEdge(ctx(t), claimed, nil); !errors.Is(err, store.ErrOtherEdge) {
		t.Fatalf("edge-2 reporting as edge-1's instance: %v, want %v", err, store.ErrOtherEdge)
	}
	checkEdges(t, s, "after edge-2 reported as edge-1's instance", e1, e2)
	restarted := store.FleetEdge{ID: "e3", Name: "edge-1", Serial: "0c2d", AppliedSeq: 5, LastContact: at(5 * time.Second), Source: "10.0.1.1"}
	elsewhere := store.FleetEdge{ID: "e4", Name: "edge-1", Serial: "0c2d", AppliedSeq: 5, LastContact: at(6 * time.Second), Source: "10.0.1.9"}
	for _, e := range []store.FleetEdge{restarted, elsewhere} {
		must(t, s.ReportEdge(ctx(t), e, nil))
	}
	checkEdges(t, s, "after edge-1 restarted at its address, and another of its certificate elsewhere", e2, restarted, elsewhere)
	n, err := s.ForgetFleet(ctx(t), at(2*time.Second))
	must(t, err)
	if n != 1 {
		t.Errorf("forgetting those not heard from since 2s removed %d rows, want 1", n)
	}
	checkEdges(t, s, "after forgetting those not heard from since 2s", restarted, elsewhere)
}

// checkEdges checks that the store lists the edges want, by id.
func checkEdges(t *testing.T, s Store, when string, want ...store.FleetEdge) {
	t.Helper()
	got, err := s.ListEdges(ctx(t))
	must(t, err)
	if !slices.EqualFunc(got, want, sameEdge) {
		t.Fatalf("%s: ListEdges = %+v, want %+v", when, got, want)
	}
}

// use is a use of kid at at(d).
func use(kid string, d time.Duration) store.KeyUse { return store.KeyUse{Kid: kid, At: at(d)} }

func sameEdge(a, b store.FleetEdge) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Serial == b.Serial && a.AppliedSeq == b.AppliedSeq &&
		a.LastContact.Equal(b.LastContact) && a.Source == b.Source
}

// testFleetKeyUses: a report raises each known key's last use, never
// lowers it, ignores unknown kids and takes no change number.
func testFleetKeyUses(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	for _, kid := range []string{"k1", "k2", "k3"} {
		_, err := s.AddClientKey(ctx(t), clientKey(kid, "c1"), keyEvent(audit.KeyAdd, kid))
		must(t, err)
	}
	edge := store.FleetEdge{ID: "e1", Name: "edge-1", Serial: "01", Source: "10.0.1.1"}
	steps := []struct {
		name string
		uses []store.KeyUse
		want map[string]time.Time // each key's last use after the step
	}{
		{"first uses, an unknown kid among them", []store.KeyUse{use("k1", 10*time.Second), use("k-none", time.Hour), use("k2", 20*time.Second)},
			map[string]time.Time{"k1": at(10 * time.Second), "k2": at(20 * time.Second)}},
		{"an older use lowers nothing", []store.KeyUse{use("k1", 5*time.Second)},
			map[string]time.Time{"k1": at(10 * time.Second), "k2": at(20 * time.Second)}},
		{"a kid twice: the later use", []store.KeyUse{use("k3", 40*time.Second), use("k1", 30*time.Second), use("k3", 35*time.Second)},
			map[string]time.Time{"k1": at(30 * time.Second), "k2": at(20 * time.Second), "k3": at(40 * time.Second)}},
		{"no uses", nil,
			map[string]time.Time{"k1": at(30 * time.Second), "k2": at(20 * time.Second), "k3": at(40 * time.Second)}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			must(t, s.ReportEdge(ctx(t), edge, st.uses))
			checkLastUses(t, s, st.want)
		})
	}
	other := store.FleetEdge{ID: "e1", Name: "edge-2", Serial: "02", Source: "10.0.1.2"}
	if err := s.ReportEdge(ctx(t), other, []store.KeyUse{use("k1", time.Minute)}); !errors.Is(err, store.ErrOtherEdge) {
		t.Fatalf("another certificate's report of e1: %v, want %v", err, store.ErrOtherEdge)
	}
	checkLastUses(t, s, map[string]time.Time{"k1": at(30 * time.Second), "k2": at(20 * time.Second), "k3": at(40 * time.Second)})
	if cs, last := changes(t, s, 3); len(cs) != 0 || last != 3 {
		t.Fatalf("the reports took change numbers: %v, newest %d", cs, last)
	}
	if _, err := s.ClientKey(ctx(t), "k-none"); err != store.ErrNotFound {
		t.Fatalf("a report of an unknown kid made a key: %v", err)
	}
}

// checkLastUses checks each key's last use as ClientKey and
// ListClientKeys return it (the zero time for a key never used).
func checkLastUses(t *testing.T, s Store, want map[string]time.Time) {
	t.Helper()
	listed, err := s.ListClientKeys(ctx(t), store.ClientKeyFilter{Limit: 100})
	must(t, err)
	for _, l := range listed {
		k, err := s.ClientKey(ctx(t), l.Kid)
		must(t, err)
		if !k.LastUsedAt.Equal(want[l.Kid]) || !l.LastUsedAt.Equal(want[l.Kid]) {
			t.Errorf("%s last used %v (listed %v), want %v", l.Kid, k.LastUsedAt, l.LastUsedAt, want[l.Kid])
		}
	}
}

// testFleetConcurrentReports: edges report the same keys in opposite
// orders at once while the keys' client rotates: every report and the
// rotation succeed, and each key's last use is the latest reported.
func testFleetConcurrentReports(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	var kids []string
	for i := range 20 {
		kid := fmt.Sprintf("k%02d", i)
		_, err := s.AddClientKey(ctx(t), clientKey(kid, "c1"), keyEvent(audit.KeyAdd, kid))
		must(t, err)
		kids = append(kids, kid)
	}
	const edges, rounds = 6, 10
	var wg sync.WaitGroup
	for e := range edges {
		wg.Go(func() {
			for r := range rounds {
				uses := make([]store.KeyUse, len(kids))
				for i, kid := range kids {
					uses[i] = store.KeyUse{Kid: kid, At: at(time.Duration(r*edges+e) * time.Second)}
				}
				if e%2 == 1 {
					slices.Reverse(uses)
				}
				if err := s.ReportEdge(ctx(t), store.FleetEdge{ID: fmt.Sprint("e", e), Name: fmt.Sprint("edge-", e), LastContact: at(0)}, uses); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	rotated := clientKey("k-new", "c1")
	rotated.CreatedAt = at(time.Minute)
	_, err := s.RotateClientKey(ctx(t), rotated, false, keyEvent(audit.KeyRotate, "k-new"))
	wg.Wait()
	must(t, err)
	want := map[string]time.Time{}
	for _, kid := range kids {
		want[kid] = at(time.Duration(rounds*edges-1) * time.Second)
	}
	checkLastUses(t, s, want)
}

// FleetRowsBefore24 are the rows of fleet_edges, as (id, cert_serial,
// cert_name, applied_seq, last contact in seconds after at(0), source),
// that an engine's test of its migration 24 puts in version 23's table
// before CheckFleetMigrated: e1 under three serials, of two names.
var FleetRowsBefore24 = [][6]any{
	{"e1", "0a", "edge-1", 3, 100, "10.0.1.1"},
	{"e1", "0b", "edge-1", 4, 200, "10.0.1.1"},
	{"e1", "0c", "edge-9", 5, 150, "10.0.1.9"},
	{"e2", "0d", "edge-2", 3, 100, "10.0.1.2"},
}

// At is the time of at(d), for the engines' tests that write rows
// themselves.
func At(d time.Duration) time.Time { return at(d) }

// CheckFleetMigrated checks s, migrated to version 24 from
// FleetRowsBefore24: one row per instance, the last reported, and the
// instance then bound to that row's name.
func CheckFleetMigrated(t *testing.T, s Store) {
	t.Helper()
	checkEdges(t, s, "after the migration",
		store.FleetEdge{ID: "e1", Name: "edge-1", Serial: "0b", AppliedSeq: 4, LastContact: at(200 * time.Second), Source: "10.0.1.1"},
		store.FleetEdge{ID: "e2", Name: "edge-2", Serial: "0d", AppliedSeq: 3, LastContact: at(100 * time.Second), Source: "10.0.1.2"})
	if err := s.ReportEdge(ctx(t), store.FleetEdge{ID: "e1", Name: "edge-9", Serial: "0c", Source: "10.0.1.9"}, nil); !errors.Is(err, store.ErrOtherEdge) {
		t.Fatalf("another name's report of e1 after the migration: %v, want %v", err, store.ErrOtherEdge)
	}
}
