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
