package console

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// failedDelivery seeds a subscription of workspace acme and a delivery to
// it whose one attempt failed with a 503, and returns their ids.
func failedDelivery(t *testing.T, st store.Store) (sub, delivery string) {
	t.Helper()
	now := time.Now().UTC()
	if _, err := st.EnsureWorkspace(t.Context(), "acme", now); err != nil {
		t.Fatal(err)
	}
	s := store.Subscription{ID: uuid.NewString(), WorkspaceID: "acme", Endpoint: "https://example.com/hook", Protocol: "https",
		EventNames: []string{"user.delete"}, SigningKey: "whsec-0123456789abcdef", Status: store.SubscriptionActive, CreatedAt: now}
	e := audit.Event{At: now, Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: "acme",
		Entity: audit.Entity{Kind: audit.EntitySubscription, ID: s.ID}}
	if err := st.CreateSubscription(t.Context(), s, 0, e); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PublishEvent(t.Context(), store.Event{ID: "e1", WorkspaceID: "acme", Type: "user.delete", Data: []byte(`{"n":1}`),
		CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	ds, err := st.ClaimDeliveries(t.Context(), store.Claim{Owner: "test", Now: now.Add(time.Second), LeaseUntil: now.Add(time.Minute), Limit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("claimed %d, %v", len(ds), err)
	}
	at := store.Attempt{DeliveryID: ds[0].ID, StartedAt: now.Add(time.Second), Duration: time.Second, Outcome: "http_503",
		StatusCode: 503, ResponseBody: "down for maintenance"}
	if err := st.FinishAttempt(t.Context(), "test", at, store.Next{Status: store.DeliveryFailed}); err != nil {
		t.Fatal(err)
	}
	return s.ID, ds[0].ID
}

// TestDeliveries: the delivery log of a subscription and a delivery's
// attempts; alice redelivers it and recovers the failed ones, which the
// audit search shows as hers; bob sees the same pages without the buttons,
// and the API refuses his forged recovery.
func TestDeliveries(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	sub, d := failedDelivery(t, s.st)
	a := s.consoles[alice].signIn()
	if _, body := a.get("/webhooks/" + sub + "?status=given_up"); !strings.Contains(body, `data-delivery="`+d+`"`) || !strings.Contains(body, `id="recover"`) {
		t.Fatalf("the given-up deliveries:\n%s", body)
	}
	if _, body := a.get("/webhooks/" + sub + "/deliveries/" + d); !strings.Contains(body, "down for maintenance") || !strings.Contains(body, `id="redeliver"`) {
		t.Fatalf("the delivery's page:\n%s", body)
	}
	if got := a.submit("/webhooks/"+sub+"/deliveries/"+d+"/redeliver", nil); got.location != "/webhooks/"+sub+"/deliveries/"+d {
		t.Fatalf("redeliver: %d to %q, want 303 to the delivery", got.status, got.location)
	}
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	if got := a.submit("/webhooks/"+sub+"/recover", url.Values{"since": {since}}); !strings.HasPrefix(got.location, "/webhooks/"+sub+"?recovered=") {
		t.Fatalf("recover: %d to %q, want 303 to the subscription with the count", got.status, got.location)
	}
	if got := a.submit("/webhooks/"+sub+"/recover", url.Values{"since": {"yesterday"}}); got.status != http.StatusBadRequest {
		t.Fatalf("recover since yesterday: %d, want 400", got.status)
	}
	_, body := a.get("/audit?entity=" + sub)
	for _, want := range []string{alice + " redelivered a delivery of the subscription " + sub, alice + " recovered the failed deliveries of the subscription " + sub} {
		if !strings.Contains(body, want) {
			t.Errorf("the audit search shows no %q", want)
		}
	}
	b := s.consoles[bob].signIn()
	for _, path := range []string{"/webhooks/" + sub, "/webhooks/" + sub + "/deliveries/" + d} {
		if status, body := b.get(path); status != http.StatusOK || strings.Contains(body, `method="post"`) {
			t.Errorf("%s as the auditor: %d, or a change offered", path, status)
		}
	}
	if got := b.submit("/webhooks/"+sub+"/recover", url.Values{"since": {since}}); got.status != http.StatusForbidden {
		t.Fatalf("bob's forged recovery: %d, want the API's 403", got.status)
	}
}

// TestRecoverShowsNewStates: the page a recovery sends to shows the
// deliveries it sent again as they now are, pending, rather than as they
// were before it.
func TestRecoverShowsNewStates(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	sub, d := failedDelivery(t, s.st)
	a := s.consoles[alice].signIn()
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	got := a.follow(a.submit("/webhooks/"+sub+"/recover", url.Values{"since": {since}}))
	row := deliveryRow.FindStringSubmatch(got.body)
	if row == nil || row[1] != d {
		t.Fatalf("the recovery's page lists no delivery %s:\n%s", d, got.body)
	}
	if status := row[2]; status != "pending" {
		t.Fatalf("the recovery's page shows the delivery %s %q, want pending:\n%s", d, status, row[0])
	}
}

// deliveryRow is a row of the delivery log: the delivery's id and status.
var deliveryRow = regexp.MustCompile(`<tr data-delivery="([^"]+)">.*?<td class="status">([^<]*)</td>.*?</tr>`)
