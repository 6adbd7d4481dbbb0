package opscmd

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// TestSubscriptionEnableAndTest: hdc subscriptions enable turns a disabled
// subscription back on and test sends it a test event through the
// backend's delivery (whose guard refuses a loopback receiver here), each
// recorded under the operator's name; direct mode sends no test event;
// an unknown subscription is said so.
func TestSubscriptionEnableAndTest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, flags := serveAdmin(t, dir)
	st := srv.Store()
	if _, err := st.EnsureWorkspace(t.Context(), "acme", time.Now()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	sub := store.Subscription{ID: uuid.NewString(), WorkspaceID: "acme", Endpoint: "http://127.0.0.1:9/hook", Protocol: "http",
		EventNames: []string{"user.delete"}, SigningKey: "whsec-0123456789abcdef", Status: store.SubscriptionDisabled, CreatedAt: now}
	if err := st.CreateSubscription(t.Context(), sub, 0, audit.Event{At: now, Action: audit.SubscriptionCreate,
		Outcome: audit.Success, Workspace: "acme", Entity: audit.Entity{Kind: audit.EntitySubscription, ID: sub.ID}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"the enabling", []string{"subscriptions", "enable", "--subscription", sub.ID}, `"status":"active"`},
		{"again", []string{"subscriptions", "enable", "--subscription", sub.ID}, `"status":"active"`},
		{"a test event", []string{"subscriptions", "test", "--subscription", sub.ID}, `"outcome":"address_refused"`},
	} {
		out, err := remote(t, flags, tt.args...)
		if err != nil || !strings.Contains(strings.Join(strings.Fields(out), ""), tt.want) || strings.Contains(out, "whsec-") {
			t.Fatalf("%s: %s, %v; want %s", tt.name, out, err, tt.want)
		}
	}
	if _, err := hdc(t, dir, "subscriptions", "test", "--subscription", sub.ID); err == nil || !strings.Contains(err.Error(), "--admin") {
		t.Fatalf("a test event in direct mode: %v", err)
	}
	for _, cmd := range []string{"enable", "test"} {
		if _, err := remote(t, flags, "subscriptions", cmd, "--subscription", uuid.NewString()); err == nil || !strings.Contains(err.Error(), "no subscription") {
			t.Fatalf("%s of an unknown subscription: %v", cmd, err)
		}
	}
	rs, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: "acme", Agent: operatorName, Entity: sub.ID})
	if err != nil || len(rs) != 2 || rs[0].Action != audit.SubscriptionEnable || rs[1].Action != audit.SubscriptionTest || rs[1].Person.Direct {
		t.Fatalf("acme's records by %s: %+v, %v", operatorName, rs, err)
	}
}

// TestFleetPeople: hdc fleet people lists the operator whose certificate
// called the API, through the API and directly alike.
func TestFleetPeople(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, flags := serveAdmin(t, dir)
	out := mustOut(remote(t, flags, "fleet", "people"))
	if direct := mustOut(hdc(t, dir, "fleet", "people")); direct != out {
		t.Fatalf("fleet people: remote %s, direct %s", out, direct)
	}
	people := decode[[]struct {
		Name, Role, Serial string
		Revoked            bool
	}](t, out)
	if len(people) != 1 || people[0].Name != operatorName || people[0].Role != "operator" || people[0].Serial == "" || people[0].Revoked {
		t.Fatalf("fleet people: %s", out)
	}
}
