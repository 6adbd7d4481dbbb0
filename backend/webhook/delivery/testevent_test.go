package delivery

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// TestSendTest: a test event is a signed webhook.test message, verified by
// the Standard Webhooks library, with a webhook-id of its own each time;
// its result is the endpoint's answer or the failure's class, and it
// leaves no delivery in the outbox.
func TestSendTest(t *testing.T) {
	const key = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	h := start(t, nil)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader([]int{http.StatusNoContent, http.StatusServiceUnavailable}[n%2])
	})
	sub := store.Subscription{ID: "s1", WorkspaceID: "w1", Endpoint: rc.srv.URL + "/hook", Protocol: webhook.ProtocolHTTP, SigningKey: key}
	first := h.d.SendTest(t.Context(), sub)
	second := h.d.SendTest(t.Context(), sub)
	if first.Outcome != OutcomeDelivered || first.Status != http.StatusNoContent || second.Outcome != "http_503" ||
		second.Status != http.StatusServiceUnavailable || first.EventID == second.EventID || !strings.HasPrefix(first.EventID, "msg_") {
		t.Fatalf("results %+v, %+v", first, second)
	}
	wh, err := standardwebhooks.NewWebhook(key)
	if err != nil {
		t.Fatal(err)
	}
	got := rc.got()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	if err := wh.Verify(got[0].body, got[0].header); err != nil || got[0].header.Get(HeaderID) != first.EventID {
		t.Fatalf("verify: %v; webhook-id %q, want %q", err, got[0].header.Get(HeaderID), first.EventID)
	}
	var p Payload
	if err := json.Unmarshal(got[0].body, &p); err != nil || p.Type != TestEventType || !strings.Contains(string(p.Data), `"s1"`) {
		t.Fatalf("payload %s: %v", got[0].body, err)
	}
	if !p.Timestamp.Equal(p.Timestamp.Truncate(time.Microsecond)) {
		t.Fatalf("timestamp %s: finer than a published event's, which the store keeps to the microsecond", p.Timestamp.Format(time.RFC3339Nano))
	}
	if ds, err := h.store.ClaimDeliveries(t.Context(), store.Claim{Owner: "o", Now: time.Now().Add(time.Hour),
		LeaseUntil: time.Now().Add(2 * time.Hour), Limit: 10}); err != nil || len(ds) != 0 {
		t.Fatalf("the outbox holds %d deliveries (%v), want none", len(ds), err)
	}
	refused := h.d.SendTest(t.Context(), store.Subscription{ID: "s2", WorkspaceID: "w1", Endpoint: "http://10.1.2.3/hook",
		Protocol: webhook.ProtocolHTTP})
	if refused.Outcome != OutcomeAddressRefused || refused.Status != 0 {
		t.Fatalf("a refused address: %+v", refused)
	}
}
