package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// operator is an operator's action in ws with no entity, the event the
// fixtures of the identity tests record.
func operator(a audit.Action, ws string) audit.Event {
	return audit.Event{At: at(0), Action: a, Outcome: audit.Success, Workspace: ws}
}

// Ids of the operator audit test.
const (
	grantA = "7c3ebc74-5d90-4f20-9165-4a0f3e8d9c05"
	grantB = "8d4fcd85-6ea1-4031-a276-5b104f9ead06"
)

// testOperatorAudit: the identity methods that operators drive append their
// event in the same transaction as their change. A change that fails
// appends nothing, and an event that cannot be recorded undoes the change.
func testOperatorAudit(t *testing.T, s Store) {
	for _, ws := range []string{"w1", "w2"} {
		_, err := s.EnsureWorkspace(ctx(t), ws, t0)
		must(t, err)
	}
	ev := func(a audit.Action, ws string, kind audit.EntityKind, id string, d time.Duration) audit.Event {
		return audit.Event{At: at(d), Action: a, Outcome: audit.Success, Workspace: ws, Entity: audit.Entity{Kind: kind, ID: id}}
	}
	invalid := func(e audit.Event) audit.Event { e.Outcome = "maybe"; return e }
	client := func(id string) store.Client {
		return store.Client{ID: id, WorkspaceID: "w1", SecretHash: "h", Status: store.ClientActive, CreatedAt: t0}
	}
	grant := func(id string, key byte) store.SharingGrant {
		return store.SharingGrant{ID: id, WorkspaceID: "w2", ClientID: clientA, KeyHash: hash(key), CreatedAt: t0}
	}

	// Each change that fails, by the store or by its event, leaves both the
	// data and the chain as they were.
	steps := []struct {
		name string
		do   func() error
		want error // nil: done and recorded; else errors.Is, or any error when errAny
		any  bool
	}{
		{"create", func() error {
			return s.CreateClient(ctx(t), client(clientA), ev(audit.ClientCreate, "w1", audit.EntityClient, clientA, time.Second))
		}, nil, false},
		{"create taken", func() error {
			return s.CreateClient(ctx(t), client(clientA), ev(audit.ClientCreate, "w1", audit.EntityClient, clientA, 2*time.Second))
		}, store.ErrConflict, false},
		{"create unrecordable", func() error {
			return s.CreateClient(ctx(t), client(clientB), invalid(ev(audit.ClientCreate, "w1", audit.EntityClient, clientB, 2*time.Second)))
		}, nil, true},
		{"grant", func() error {
			return s.CreateSharingGrant(ctx(t), grant(grantA, 1), ev(audit.SharingGrant, "w2", audit.EntityGrant, grantA, 3*time.Second))
		}, nil, false},
		{"grant unrecordable", func() error {
			return s.CreateSharingGrant(ctx(t), grant(grantB, 2), invalid(ev(audit.SharingGrant, "w2", audit.EntityGrant, grantB, 4*time.Second)))
		}, nil, true},
		{"revoke unrecordable", func() error {
			return s.RevokeSharingGrant(ctx(t), grantA, at(5*time.Second), invalid(ev(audit.SharingRevoke, "w2", audit.EntityGrant, grantA, 5*time.Second)))
		}, nil, true},
		{"revoke unknown", func() error {
			return s.RevokeSharingGrant(ctx(t), grantB, at(5*time.Second), ev(audit.SharingRevoke, "w2", audit.EntityGrant, grantB, 5*time.Second))
		}, store.ErrNotFound, false},
		{"revoke", func() error {
			return s.RevokeSharingGrant(ctx(t), grantA, at(6*time.Second), ev(audit.SharingRevoke, "w2", audit.EntityGrant, grantA, 6*time.Second))
		}, nil, false},
		{"disable unrecordable", func() error {
			return s.SetClientStatus(ctx(t), clientA, store.ClientDisabled, invalid(ev(audit.ClientDisable, "w1", audit.EntityClient, clientA, 7*time.Second)))
		}, nil, true},
		{"disable unknown", func() error {
			return s.SetClientStatus(ctx(t), clientB, store.ClientDisabled, ev(audit.ClientDisable, "w1", audit.EntityClient, clientB, 7*time.Second))
		}, store.ErrNotFound, false},
		{"disable", func() error {
			return s.SetClientStatus(ctx(t), clientA, store.ClientDisabled, ev(audit.ClientDisable, "w1", audit.EntityClient, clientA, 8*time.Second))
		}, nil, false},
	}
	for _, st := range steps {
		err := st.do()
		switch {
		case st.any && err == nil:
			t.Fatalf("%s: no error", st.name)
		case !st.any && st.want == nil:
			must(t, err)
		case !st.any:
			wantErr(t, err, st.want)
		}
	}

	// What was done is there; what failed is not.
	c, err := s.GetClient(ctx(t), clientA)
	must(t, err)
	if c.Status != store.ClientDisabled {
		t.Errorf("client status = %s, want disabled", c.Status)
	}
	if _, err := s.GetClient(ctx(t), clientB); err == nil {
		t.Error("a client whose event could not be recorded was created")
	}
	g, err := s.GetSharingGrant(ctx(t), grantA)
	must(t, err)
	if !g.RevokedAt.Equal(at(6 * time.Second)) {
		t.Errorf("grant revoked at %v, want %v (the unrecorded revocation undone)", g.RevokedAt, at(6*time.Second))
	}
	if _, err := s.GetSharingGrant(ctx(t), grantB); err == nil {
		t.Error("a grant whose event could not be recorded was created")
	}

	// The chains hold exactly the changes done, in order, and verify.
	want := map[string][]audit.Event{
		"w1": {
			ev(audit.ClientCreate, "w1", audit.EntityClient, clientA, time.Second),
			ev(audit.ClientDisable, "w1", audit.EntityClient, clientA, 8*time.Second),
		},
		"w2": {
			ev(audit.SharingGrant, "w2", audit.EntityGrant, grantA, 3*time.Second),
			ev(audit.SharingRevoke, "w2", audit.EntityGrant, grantA, 6*time.Second),
		},
	}
	for ws, events := range want {
		rs := listAudit(t, s, store.AuditFilter{Workspace: ws})
		if len(rs) != len(events) {
			t.Fatalf("%s: %d records, want %d: %+v", ws, len(rs), len(events), rs)
		}
		for i, r := range rs {
			if !reflect.DeepEqual(r.Event, events[i]) || r.Seq != int64(i+1) {
				t.Errorf("%s record %d = %+v, want %+v", ws, i+1, r, events[i])
			}
		}
		must(t, store.VerifyAudit(ctx(t), s, head(t, s, ws), store.AuditCheck{}))
	}
}
