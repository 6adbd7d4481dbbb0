package audit

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Ids of the fixtures.
const (
	client1  = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
	grant1   = "7c2d4e6f-8a9b-4c1d-8e2f-3a4b5c6d7e02"
	care1    = "9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"
	request1 = "1f2e3d4c-5b6a-4798-8877-665544332204"
)

// alice is an operator, as her certificate names her.
var alice = Person{Name: "alice@example.org", Serial: "0a1b2c", Role: contract.RoleOperator}

// t0 has nanoseconds, which records drop.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)

// retrieve is a complete event: a record read through a sharing grant,
// encrypted.
func retrieve() Event {
	return Event{
		At: t0, Action: RecordRetrieve, Outcome: Success, Workspace: "clinic-1",
		Client: client1, Grant: grant1, Entity: Entity{Kind: EntityCareContext, ID: care1},
		Source: netip.MustParseAddr("203.0.113.9"), Kid: "client-1:2026", Request: request1,
	}
}

// clientUpdate is an operator's change of a client's name or labels.
func clientUpdate(cs ...Change) Event {
	return Event{At: t0, Action: ClientUpdate, Outcome: Success, Workspace: "w", Entity: Entity{Kind: EntityClient, ID: client1},
		Person: alice, Changes: cs}
}

func TestValidate(t *testing.T) {
	prune := Pruned{From: 1, Last: Link{Seq: 4, Hash: Hash{1}}}
	tests := []struct {
		name   string
		change func(e *Event)
		want   string // part of the error; empty when valid
	}{
		{"complete", func(*Event) {}, ""},
		{"minimal", func(e *Event) { *e = Event{At: t0, Action: Login, Outcome: Success, Workspace: "w"} }, ""},
		{"no entity", func(e *Event) { e.Entity = Entity{} }, ""},
		{"IPv6 source", func(e *Event) { e.Source = netip.MustParseAddr("2001:db8::1") }, ""},
		{"failed login outside any workspace", func(e *Event) {
			*e = Event{At: t0, Action: LoginFailed, Outcome: Denied, Source: e.Source}
		}, ""},
		{"prune", func(e *Event) {
			*e = Event{At: t0, Action: RetentionPrune, Outcome: Success, Workspace: "w", Pruned: prune}
		}, ""},
		{"refusals counted", func(e *Event) { e.Outcome, e.Count = Denied, 12 }, ""},
		{"key", func(e *Event) { e.Action, e.Entity = KeyRotate, Entity{Kind: EntityKey, ID: "client-1:2027"} }, ""},
		{"operator's key of an unknown client, outside any workspace", func(e *Event) {
			*e = Event{At: t0, Action: KeyAdd, Outcome: Success, Entity: Entity{Kind: EntityKey, ID: "k1"}}
		}, ""},
		{"client update with changes", func(e *Event) { *e = clientUpdate(Change{Field: ChangeName, Before: "A", After: "B"}) }, ""},
		{"client update of a label", func(e *Event) { *e = clientUpdate(Change{Field: ChangeLabel + "example.org/env", After: "prod"}) }, ""},
		{"change of a field the action does not change", func(e *Event) { *e = clientUpdate(Change{Field: ChangeLimits, After: "{}"}) }, "changes"},
		{"change of an unknown field", func(e *Event) { *e = clientUpdate(Change{Field: "secret_hash", After: "x"}) }, "changes"},
		{"label change without a key", func(e *Event) { *e = clientUpdate(Change{Field: ChangeLabel, After: "x"}) }, "changes"},
		{"label key with a space", func(e *Event) { *e = clientUpdate(Change{Field: ChangeLabel + "a b", After: "x"}) }, "changes"},
		{"change that moves nothing", func(e *Event) { *e = clientUpdate(Change{Field: ChangeName, Before: "A", After: "A"}) }, "changes"},
		{"change with a control character", func(e *Event) { *e = clientUpdate(Change{Field: ChangeName, After: "A\x1b[2J"}) }, "changes"},
		{"change of a long value", func(e *Event) {
			*e = clientUpdate(Change{Field: ChangeName, After: strings.Repeat("x", MaxChangeValue+1)})
		}, "changes"},
		{"change not UTF-8", func(e *Event) { *e = clientUpdate(Change{Field: ChangeName, After: "\xff"}) }, "changes"},
		{"a field changed twice", func(e *Event) {
			*e = clientUpdate(Change{Field: ChangeName, After: "A"}, Change{Field: ChangeName, After: "B"})
		}, "changes"},
		{"too many changes", func(e *Event) {
			cs := make([]Change, MaxChanges+1)
			for i := range cs {
				cs[i] = Change{Field: ChangeLabel + "k" + strings.Repeat("x", i), After: "v"}
			}
			*e = clientUpdate(cs...)
		}, "changes"},
		{"empty changes", func(e *Event) { *e = clientUpdate(); e.Changes = []Change{} }, "changes"},
		{"changes on another action", func(e *Event) { e.Changes = []Change{{Field: ChangeName, After: "A"}} }, "changes"},
		{"limits cleared", func(e *Event) {
			*e = clientUpdate(Change{Field: ChangeLimits, Before: `{"upload_bytes_per_day":5}`})
			e.Action = ClientLimitsClear
		}, ""},
		{"operator's client outside any workspace", func(e *Event) {
			*e = Event{At: t0, Action: ClientCreate, Outcome: Success, Entity: Entity{Kind: EntityClient, ID: client1}}
		}, "workspace"},

		{"a rotation's replaced and weakened keys", func(e *Event) {
			e.Action, e.Entity, e.Replaced, e.Weakened = KeyRotate, Entity{Kind: EntityKey, ID: "k2"}, []string{"k1", "k0"}, []string{"enc", "freshness"}
		}, ""},
		{"replaced on another action", func(e *Event) {
			e.Action, e.Entity, e.Replaced = KeyAdd, Entity{Kind: EntityKey, ID: "k2"}, []string{"k1"}
		}, "another action than a rotation"},
		{"weakened on another action", func(e *Event) { e.Weakened = []string{"enc"} }, "another action than a rotation"},
		{"a replaced kid invalid", func(e *Event) {
			e.Action, e.Entity, e.Replaced = KeyRotate, Entity{Kind: EntityKey, ID: "k2"}, []string{"k 1"}
		}, "replaced kids"},
		{"a replaced kid twice", func(e *Event) {
			e.Action, e.Entity, e.Replaced = KeyRotate, Entity{Kind: EntityKey, ID: "k2"}, []string{"k1", "k1"}
		}, "replaced kids"},
		{"replaced, empty", func(e *Event) {
			e.Action, e.Entity, e.Replaced = KeyRotate, Entity{Kind: EntityKey, ID: "k2"}, []string{}
		}, "replaced kids"},
		{"too many replaced", func(e *Event) {
			e.Action, e.Entity = KeyRotate, Entity{Kind: EntityKey, ID: "k2"}
			for i := range MaxReplaced + 1 {
				e.Replaced = append(e.Replaced, "k-"+strings.Repeat("x", i+1))
			}
		}, "replaced kids"},
		{"a key action names its key's client", func(e *Event) {
			*e = Event{At: t0, Action: KeyRetire, Outcome: Success, Workspace: "w", Entity: Entity{Kind: EntityKey, ID: "k1"}, Person: alice, Owner: client1}
		}, ""},
		{"an owner not a UUID", func(e *Event) {
			*e = Event{At: t0, Action: KeyAdd, Outcome: Success, Workspace: "w", Entity: Entity{Kind: EntityKey, ID: "k1"}, Person: alice, Owner: "clinic seven"}
		}, "owner"},
		{"an owner too long", func(e *Event) {
			*e = Event{At: t0, Action: KeyAdd, Outcome: Success, Workspace: "w", Entity: Entity{Kind: EntityKey, ID: "k1"}, Person: alice, Owner: client1 + client1}
		}, "owner"},
		{"an owner on an action on no key", func(e *Event) { e.Owner = client1 }, "owner"},
		{"an unknown loss", func(e *Event) {
			e.Action, e.Entity, e.Weakened = KeyRotate, Entity{Kind: EntityKey, ID: "k2"}, []string{"secret"}
		}, "weakened"},
		{"an operator's change names its author", func(e *Event) {
			*e = Event{At: t0, Action: KeyRetire, Outcome: Success, Workspace: "w", Entity: Entity{Kind: EntityKey, ID: "k1"}, Person: alice}
		}, ""},
		{"a direct change names the local user", func(e *Event) {
			*e = Event{At: t0, Action: ClientCreate, Outcome: Success, Workspace: "w", Entity: Entity{Kind: EntityClient, ID: client1},
				Person: Person{Name: "root@host-1", Role: contract.RoleOperator, Direct: true}}
		}, ""},
		{"an auditor's read of a trail", func(e *Event) {
			*e = Event{At: t0, Action: AuditExport, Outcome: Success, Entity: Entity{Kind: EntityWorkspace, ID: "clinic-1"},
				Person: Person{Name: "bob@example.org", Serial: "ff01", Role: contract.RoleAuditor}}
		}, ""},
		{"a revocation names the certificate", func(e *Event) {
			*e = Event{At: t0, Action: CertificateRevoke, Outcome: Success, Entity: Entity{Kind: EntityCertificate, ID: "0a1b"}, Person: alice}
		}, ""},
		{"an auditor's change", func(e *Event) {
			*e = Event{At: t0, Action: KeyRetire, Outcome: Success, Workspace: "w", Entity: Entity{Kind: EntityKey, ID: "k1"},
				Person: Person{Name: "bob@example.org", Serial: "ff01", Role: contract.RoleAuditor}}
		}, "person"},
		{"a person on a client's action", func(e *Event) { e.Client, e.Grant, e.Person = "", "", alice }, "person"},
		{"a client and a person", func(e *Event) {
			*e = Event{At: t0, Action: SubscriptionDelete, Outcome: Success, Workspace: "w", Client: client1,
				Entity: Entity{Kind: EntitySubscription, ID: care1}, Person: alice}
		}, "both"},
		{"a person's name with a space", func(e *Event) {
			*e = Event{At: t0, Action: KeyAdd, Outcome: Success, Entity: Entity{Kind: EntityKey, ID: "k1"}, Person: alice}
			e.Person.Name = "alice smith"
		}, "person"},
		{"a serial in upper case", func(e *Event) {
			*e = Event{At: t0, Action: KeyAdd, Outcome: Success, Entity: Entity{Kind: EntityKey, ID: "k1"}, Person: alice}
			e.Person.Serial = "0A1B"
		}, "person"},
		{"a certificate's person without a serial", func(e *Event) {
			*e = Event{At: t0, Action: KeyAdd, Outcome: Success, Entity: Entity{Kind: EntityKey, ID: "k1"}, Person: alice}
			e.Person.Serial = ""
		}, "person"},
		{"a direct person with a serial", func(e *Event) {
			*e = Event{At: t0, Action: KeyAdd, Outcome: Success, Entity: Entity{Kind: EntityKey, ID: "k1"}, Person: alice}
			e.Person.Direct = true
		}, "person"},
		{"a certificate's serial as an entity, not hex", func(e *Event) {
			*e = Event{At: t0, Action: CertificateRevoke, Outcome: Success, Entity: Entity{Kind: EntityCertificate, ID: "serial-1"}, Person: alice}
		}, "entity"},
		{"unknown action", func(e *Event) { e.Action = "read" }, "unknown action"},
		{"unknown outcome", func(e *Event) { e.Outcome = "ok" }, "unknown outcome"},
		{"refusal succeeding", func(e *Event) { e.Action, e.Entity = RefreshReuse, Entity{} }, "refusal"},
		{"no time", func(e *Event) { e.At = time.Time{} }, "time"},
		{"year 10000", func(e *Event) { e.At = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "time"},
		{"no workspace", func(e *Event) { e.Workspace = "" }, "workspace"},
		{"workspace with a slash", func(e *Event) { e.Workspace = "a/b" }, "workspace"},
		{"client not a UUID", func(e *Event) { e.Client = "sk_live_secret" }, "client"},
		{"grant not a UUID", func(e *Event) { e.Grant = "g1" }, "grant"},
		{"grant without client", func(e *Event) { e.Client = "" }, "grant"},
		{"entity of another kind", func(e *Event) { e.Entity.Kind = EntitySubscription }, "entity"},
		{"entity id not a UUID", func(e *Event) { e.Entity.ID = "Bearer eyJhbGciOi" }, "entity"},
		{"entity without id", func(e *Event) { e.Entity.ID = "" }, "entity"},
		{"entity on an action without one", func(e *Event) { e.Action = Login }, "entity"},
		{"key id with a space", func(e *Event) { e.Action, e.Entity = KeyAdd, Entity{Kind: EntityKey, ID: "a b"} }, "entity"},
		{"source with a zone", func(e *Event) { e.Source = netip.MustParseAddr("fe80::1%eth0") }, "zone"},
		{"source IPv4-mapped", func(e *Event) { e.Source = netip.MustParseAddr("::ffff:203.0.113.9") }, "IPv4-mapped"},
		{"kid with a space", func(e *Event) { e.Kid = "a b" }, "kid"},
		{"request id not a UUID", func(e *Event) { e.Request = "r-1" }, "request"},
		{"pruned on another action", func(e *Event) { e.Pruned = prune }, "pruned"},
		{"a count on a success", func(e *Event) { e.Count = 3 }, "count"},
		{"a count of one", func(e *Event) { e.Outcome, e.Count = Denied, 1 }, "count"},
		{"a negative count", func(e *Event) { e.Outcome, e.Count = Denied, -2 }, "count"},
		{"prune without range", func(e *Event) { *e = Event{At: t0, Action: RetentionPrune, Outcome: Success, Workspace: "w"} }, "pruned"},
		{"prune ending before it starts", func(e *Event) {
			*e = Event{At: t0, Action: RetentionPrune, Outcome: Success, Workspace: "w", Pruned: Pruned{From: 5, Last: Link{Seq: 4, Hash: Hash{1}}}}
		}, "pruned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := retrieve()
			tt.change(&e)
			err := e.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate() = %v, want an error about %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") || err != nil && strings.Contains(err.Error(), "eyJ") {
				t.Fatalf("the error %q quotes the refused value", err)
			}
		})
	}
}
