package admin

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestPeople: every person's certificate that calls the API is listed,
// of whatever role and whether the route served it or not, with its
// name, role and serial; the other roles' certificates are no people; a
// revoked certificate is listed revoked.
func TestPeople(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.do("publisher", "GET", "/admin/v1/whoami", nil)
	a.do("operator", "GET", "/admin/v1/whoami", nil).decode(t, 200, nil)
	if r := a.do("auditor", "POST", "/admin/v1/clients", map[string]string{"workspace_id": "w1"}); r.status != 403 {
		t.Fatalf("the auditor made a change: %d %s", r.status, r.body)
	}
	aliceSerial, _ := Serial(serialOf(t, a.hop, alice))
	bobSerial, _ := Serial(serialOf(t, a.hop, bob))
	people := func() []adminapi.PersonSeen {
		var p adminapi.Page[adminapi.PersonSeen]
		a.do("operator", "GET", "/admin/v1/people", nil).decode(t, 200, &p)
		return p.Items
	}
	got := people()
	if len(got) != 2 || got[0].Name != alice || got[0].Role != "operator" || got[0].Serial != aliceSerial ||
		got[1].Name != bob || got[1].Role != "auditor" || got[1].Serial != bobSerial || got[0].Revoked || got[1].Revoked ||
		got[0].FirstSeen.IsZero() || got[0].LastSeen.Before(got[0].FirstSeen) {
		t.Fatalf("the people: %+v", got)
	}
	a.do("operator", "POST", "/admin/v1/revocations", map[string]string{"serial": bobSerial}).decode(t, 201, nil)
	if got := people(); len(got) != 2 || got[0].Revoked || !got[1].Revoked {
		t.Fatalf("the people after bob's certificate was revoked: %+v", got)
	}
	var page adminapi.Page[adminapi.PersonSeen]
	a.do("auditor", "GET", "/admin/v1/people", nil).decode(t, 403, nil) // revoked
	a.do("operator", "GET", "/admin/v1/people?limit=1", nil).decode(t, 200, &page)
	var rest adminapi.Page[adminapi.PersonSeen]
	a.do("operator", "GET", "/admin/v1/people?limit=1&cursor="+page.Next, nil).decode(t, 200, &rest)
	if len(page.Items) != 1 || page.Items[0].Name != alice || len(rest.Items) != 1 || rest.Items[0].Name != bob || rest.Next != "" {
		t.Fatalf("the people a page at a time: %+v, then %+v", page, rest)
	}
}

// countingPeople counts the writes of the people, failing them while
// fail is set.
type countingPeople struct {
	writes int
	fail   bool
}

func (c *countingPeople) People(context.Context) ([]store.Person, error) { return nil, nil }

func (c *countingPeople) SeePerson(context.Context, store.Person, time.Time) error {
	c.writes++
	if c.fail {
		return errors.New("the database does not answer")
	}
	return nil
}

// TestSightings: a backend writes a certificate's use at its first
// request, then at its first after SeenInterval, not between; a write
// that failed is tried again at the next request; each certificate
// counts apart.
func TestSightings(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	st := &countingPeople{}
	s := newSightings(st, func() time.Time { return now })
	alice := audit.Person{Name: alice, Serial: "0a", Role: contract.RoleOperator}
	bob := audit.Person{Name: bob, Serial: "0b", Role: contract.RoleAuditor}
	for _, step := range []struct {
		name   string
		after  time.Duration
		who    audit.Person
		fail   bool
		writes int // in all, after the step
	}{
		{"the first request", 0, alice, false, 1},
		{"within the interval", 30 * time.Second, alice, false, 1},
		{"another certificate", 0, bob, false, 2},
		{"past the interval", SeenInterval, alice, false, 3},
		{"a failed write", SeenInterval, alice, true, 4},
		{"tried again at once", time.Second, alice, false, 5},
		{"then within the interval", time.Second, alice, false, 5},
	} {
		now = now.Add(step.after)
		st.fail = step.fail
		err := s.see(t.Context(), step.who)
		if (err != nil) != step.fail || st.writes != step.writes {
			t.Fatalf("%s: %v, %d writes in all, want %d", step.name, err, st.writes, step.writes)
		}
	}
}
