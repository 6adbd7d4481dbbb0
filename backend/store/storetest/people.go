package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// seen is the person of serial named name, seen at d.
func seen(serial, name string, d time.Duration) store.Person {
	return store.Person{Serial: serial, Name: name, Role: "operator", FirstSeen: at(d), LastSeen: at(d)}
}

// testPeople: a certificate is listed once, first seen when first served;
// its last seen moves on only once it is older than the bound SeePerson is
// given, never back; the list is by name, then serial.
func testPeople(t *testing.T, s Store) {
	steps := []struct {
		name  string
		p     store.Person
		stale time.Duration // SeePerson's bound, after at(0)
		want  []store.Person
	}{
		{"a new certificate", seen("0a", "carol@example.org", 0), -time.Minute,
			[]store.Person{seen("0a", "carol@example.org", 0)}},
		{"within the interval: no write", seen("0a", "carol@example.org", 30*time.Second), -30 * time.Second,
			[]store.Person{seen("0a", "carol@example.org", 0)}},
		{"past the interval: last seen moves", seen("0a", "carol@example.org", 2*time.Minute), time.Minute,
			[]store.Person{{Serial: "0a", Name: "carol@example.org", Role: "operator", FirstSeen: at(0), LastSeen: at(2 * time.Minute)}}},
		{"an older request: never back", seen("0a", "carol@example.org", time.Minute+time.Second), time.Hour,
			[]store.Person{{Serial: "0a", Name: "carol@example.org", Role: "operator", FirstSeen: at(0), LastSeen: at(2 * time.Minute)}}},
		{"by name, then serial", seen("ff", "alice@example.org", time.Hour), 0,
			[]store.Person{seen("ff", "alice@example.org", time.Hour),
				{Serial: "0a", Name: "carol@example.org", Role: "operator", FirstSeen: at(0), LastSeen: at(2 * time.Minute)}}},
		{"a renewed certificate of a name", seen("1b", "alice@example.org", 2*time.Hour), 0,
			[]store.Person{seen("1b", "alice@example.org", 2*time.Hour), seen("ff", "alice@example.org", time.Hour),
				{Serial: "0a", Name: "carol@example.org", Role: "operator", FirstSeen: at(0), LastSeen: at(2 * time.Minute)}}},
	}
	for _, st := range steps {
		must(t, s.SeePerson(ctx(t), st.p, at(st.stale)))
		got, err := s.People(ctx(t))
		must(t, err)
		if !slices.Equal(got, st.want) {
			t.Fatalf("%s: People = %+v, want %+v", st.name, got, st.want)
		}
	}
}

// testPeopleConcurrent: backends that serve a new certificate at once
// list it once, last seen at the latest time they saw it, whatever
// order their writes take.
func testPeopleConcurrent(t *testing.T, s Store) {
	const backends = 8
	var wg sync.WaitGroup
	for i := range backends {
		wg.Go(func() {
			p := seen("0c", "dave@example.org", time.Duration(i)*time.Minute)
			if err := s.SeePerson(ctx(t), p, at(time.Duration(i)*time.Minute-30*time.Second)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.People(ctx(t))
	must(t, err)
	if len(got) != 1 || got[0].Serial != "0c" || !got[0].LastSeen.Equal(at((backends-1)*time.Minute)) {
		t.Fatalf("People after %d backends saw one certificate: %+v", backends, got)
	}
}
