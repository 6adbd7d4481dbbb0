package console

import (
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestCheckListen: loopback unless the operator allows more.
func TestCheckListen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8090", false, true},
		{"[::1]:0", false, true},
		{"localhost:8090", false, true},
		{"127.0.0.2:8090", false, true},
		{":8090", false, false},
		{"0.0.0.0:8090", false, false},
		{"192.0.2.7:8090", false, false},
		{"console.example.org:8090", false, false},
		{"0.0.0.0:8090", true, true},
		{"no port", false, false},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			err := CheckListen(tc.addr, tc.remote)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckListen(%q, %v) = %v", tc.addr, tc.remote, err)
			}
		})
	}
}

// TestSentence: each record reads as who did what, where and when.
func TestSentence(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 15, 14, 2, 0, 0, time.UTC)
	alice := audit.Person{Name: "alice@example.org", Role: contract.RoleOperator, Serial: "0a"}
	for _, tc := range []struct {
		name string
		rec  audit.Record
		want string
	}{
		{"a rotation", audit.Record{Event: audit.Event{At: at, Action: audit.KeyRotate, Outcome: audit.Success, Workspace: "clinic-7",
			Person: alice, Entity: audit.Entity{Kind: audit.EntityKey, ID: "k-2"}, Replaced: []string{"k-1"}}},
			"alice@example.org rotated to the new key k-2, retiring k-1 in clinic-7 at 2026-03-15 14:02:00 UTC"},
		{"a client's refused read", audit.Record{Event: audit.Event{At: at, Action: audit.RecordRetrieve, Outcome: audit.Denied,
			Workspace: "acme", Client: "c-1", Entity: audit.Entity{Kind: audit.EntityCareContext, ID: "cc-9"}}},
			"the client c-1 retrieved the record cc-9 in acme at 2026-03-15 14:02:00 UTC (refused)"},
		{"the backend's prune", audit.Record{Event: audit.Event{At: at, Action: audit.RetentionPrune, Outcome: audit.Success}},
			"the backend pruned the trail at 2026-03-15 14:02:00 UTC"},
		{"a named client's read", audit.Record{Event: audit.Event{At: at, Action: audit.RecordRetrieve, Outcome: audit.Success,
			Workspace: "acme", Client: "c-7", Entity: audit.Entity{Kind: audit.EntityCareContext, ID: "cc-9"}}},
			"Clinic Seven retrieved the record cc-9 in acme at 2026-03-15 14:02:00 UTC"},
		{"a client's name and labels changed", audit.Record{Event: audit.Event{At: at, Action: audit.ClientUpdate, Outcome: audit.Success,
			Workspace: "acme", Person: alice, Entity: audit.Entity{Kind: audit.EntityClient, ID: "c-7"}, Changes: []audit.Change{
				{Field: audit.ChangeName, Before: "Clinic 7", After: "Clinic Seven"}, {Field: audit.ChangeLabel + "env", After: "prod"},
				{Field: audit.ChangeLabel + "tier", Before: "gold"}}}},
			"alice@example.org changed the client Clinic Seven: name Clinic 7 → Clinic Seven, label env set to prod, label tier removed (was gold) in acme at 2026-03-15 14:02:00 UTC"},
		{"an unnamed client's limits cleared", audit.Record{Event: audit.Event{At: at, Action: audit.ClientLimitsClear, Outcome: audit.Success,
			Workspace: "acme", Person: alice, Entity: audit.Entity{Kind: audit.EntityClient, ID: "c-1"},
			Changes: []audit.Change{{Field: audit.ChangeLimits, Before: `{"upload_bytes_per_day":5}`}}}},
			`alice@example.org cleared the limits of the client c-1: limits removed (was {"upload_bytes_per_day":5}) in acme at 2026-03-15 14:02:00 UTC`},
		{"an operator's enabling", audit.Record{Event: audit.Event{At: at, Action: audit.SubscriptionEnable, Outcome: audit.Success,
			Workspace: "acme", Person: alice, Entity: audit.Entity{Kind: audit.EntitySubscription, ID: "s-1"}}},
			"alice@example.org enabled the subscription s-1 in acme at 2026-03-15 14:02:00 UTC"},
		{"an operator's test event", audit.Record{Event: audit.Event{At: at, Action: audit.SubscriptionTest, Outcome: audit.Success,
			Workspace: "acme", Person: alice, Entity: audit.Entity{Kind: audit.EntitySubscription, ID: "s-1"}}},
			"alice@example.org sent a test event to the subscription s-1 in acme at 2026-03-15 14:02:00 UTC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sentence(tc.rec, map[string]string{"c-7": "Clinic Seven"}); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestKeySentence: a key action names the client whose key it is, by its
// name when it has one, else by its id; a record written before key
// actions named it reads as it did.
func TestKeySentence(t *testing.T) {
	t.Parallel()
	const named, unnamed, odd = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01", "7c2d4e6f-8a9b-4c1d-8e2f-3a4b5c6d7e02", "9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"
	names := map[string]string{named: "Clinic Seven", unnamed: "", odd: "100%s %c Clinic"}
	at := time.Date(2026, 3, 15, 14, 2, 0, 0, time.UTC)
	alice := audit.Person{Name: "alice@example.org", Role: contract.RoleOperator, Serial: "0a"}
	key := func(action audit.Action, kid, owner string, replaced ...string) audit.Record {
		return audit.Record{Event: audit.Event{At: at, Action: action, Outcome: audit.Success, Workspace: "acme", Person: alice,
			Entity: audit.Entity{Kind: audit.EntityKey, ID: kid}, Replaced: replaced, Owner: owner}}
	}
	for _, tc := range []struct {
		name string
		rec  audit.Record
		want string
	}{
		{"an added key of a named client", key(audit.KeyAdd, "k-3", named),
			"alice@example.org added the key k-3 of Clinic Seven in acme at 2026-03-15 14:02:00 UTC"},
		{"an added key of a client without a name", key(audit.KeyAdd, "k-3", unnamed),
			"alice@example.org added the key k-3 of the client " + unnamed + " in acme at 2026-03-15 14:02:00 UTC"},
		{"a rotation of a named client's key", key(audit.KeyRotate, "k-2", named, "k-1"),
			"alice@example.org rotated the key of Clinic Seven to k-2, retiring k-1 in acme at 2026-03-15 14:02:00 UTC"},
		{"a rotation of an unnamed client's key", key(audit.KeyRotate, "k-2", unnamed, "k-1"),
			"alice@example.org rotated the key of the client " + unnamed + " to k-2, retiring k-1 in acme at 2026-03-15 14:02:00 UTC"},
		{"a retired key of a named client", key(audit.KeyRetire, "k-1", named),
			"alice@example.org retired the key k-1 of Clinic Seven in acme at 2026-03-15 14:02:00 UTC"},
		{"a retired key of a client without a name", key(audit.KeyRetire, "k-1", unnamed),
			"alice@example.org retired the key k-1 of the client " + unnamed + " in acme at 2026-03-15 14:02:00 UTC"},
		{"an added key of a client whose name holds the places", key(audit.KeyAdd, "k-3", odd),
			"alice@example.org added the key k-3 of 100%s %c Clinic in acme at 2026-03-15 14:02:00 UTC"},
		{"an added key recorded before owners", key(audit.KeyAdd, "k-3", ""),
			"alice@example.org added the key k-3 in acme at 2026-03-15 14:02:00 UTC"},
		{"a rotation recorded before owners", key(audit.KeyRotate, "k-2", "", "k-1"),
			"alice@example.org rotated to the new key k-2, retiring k-1 in acme at 2026-03-15 14:02:00 UTC"},
		{"a retirement recorded before owners", key(audit.KeyRetire, "k-1", ""),
			"alice@example.org retired the key k-1 in acme at 2026-03-15 14:02:00 UTC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sentence(tc.rec, names); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestEveryActionWorded: every action of the trail (audittest's chain
// holds each) has its words in the sentences, not its code.
func TestEveryActionWorded(t *testing.T) {
	t.Parallel()
	recs, err := audittest.Records("acme", time.Date(2026, 3, 15, 14, 2, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, ok := verbs[r.Action]; !ok {
			t.Errorf("%s has no words: %q", r.Action, Sentence(r, nil))
		}
	}
}

// FuzzRecordOf: whatever the API answers, reading a listed record fails
// or gives a record that lists back as it came.
func FuzzRecordOf(f *testing.F) {
	f.Add([]byte(`{"v":1,"workspace":"acme","seq":1,"hash":"00"}`))
	f.Add([]byte(`,"hash":"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := RecordOf(b)
		if err != nil {
			return
		}
		if !strings.HasPrefix(string(b), strings.TrimSuffix(string(r.Canonical()), "}")) {
			t.Fatalf("%q read as %+v", b, r)
		}
		_ = Sentence(r, nil)
	})
}
