package delivery

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestDisableFailing: on a clock that runs a minute per reading, an
// endpoint failing for the disable period (an hour) is disabled with the
// reason "failing", its delivery kept; the workspace's other subscription,
// which asked for subscription.disabled, receives it; the metric and the
// trail say so; enabled again, the kept delivery reaches the endpoint,
// which works now.
func TestDisableFailing(t *testing.T) {
	t.Parallel()
	var readings atomic.Int64
	base := time.Now()
	h := start(t, func(c *Config) {
		c.DisableAfter = time.Hour
		c.Lease = 1000 * time.Hour // the clock runs fast: no lease expires mid-attempt
		c.Schedule = Schedule{Base: time.Millisecond, Max: time.Second, Horizon: 72 * time.Hour}
		c.Clock = func() time.Time { return base.Add(time.Duration(readings.Add(1)) * time.Minute) }
	})
	var working atomic.Bool
	failing := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		if working.Load() {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	told := newReceiver(t, status(http.StatusOK))
	subID := h.subscribe(failing.srv.URL, webhook.ProtocolHTTP, "")
	h.subscribeWith(told.srv.URL+"/told", store.EventSubscriptionDisabled)
	kept := h.publish("user.delete", `{"user":"u1"}`)
	if len(kept) != 1 {
		t.Fatalf("deliveries %v, want the failing subscription's only", kept)
	}
	var sub store.Subscription
	testkit.Eventually(t, 30*time.Second, "the failing subscription disabled", func() bool {
		var err error
		sub, err = h.store.GetSubscription(t.Context(), "w1", subID)
		return err == nil && sub.Status == store.SubscriptionDisabled
	})
	if sub.DisabledReason != store.DisabledFailing || sub.FailingSince.IsZero() {
		t.Fatalf("disabled subscription %+v", sub)
	}
	if d, err := h.store.GetDelivery(t.Context(), kept[0]); err != nil || d.Status != store.DeliveryPending {
		t.Fatalf("kept delivery %+v %v", d, err)
	}
	testkit.Eventually(t, 30*time.Second, "subscription.disabled told", func() bool { return len(told.got()) == 1 })
	var msg struct {
		Type string             `json:"type"`
		Data store.DisabledData `json:"data"`
	}
	if err := json.Unmarshal(told.got()[0].body, &msg); err != nil || msg.Type != store.EventSubscriptionDisabled ||
		msg.Data.SubscriptionID != subID || msg.Data.Reason != store.DisabledFailing {
		t.Fatalf("told %s (%v)", told.got()[0].body, err)
	}
	if got := testutil.ToFloat64(h.d.metrics.disabled.WithLabelValues(store.DisabledFailing)); got != 1 {
		t.Fatalf("subscriptions disabled (failing) = %v", got)
	}
	rs, err := h.store.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1", Entity: subID})
	if err != nil || len(rs) != 2 || rs[1].Action != audit.DeliveryDisabled || rs[1].Reason != store.DisabledFailing {
		t.Fatalf("trail %+v %v", rs, err)
	}
	before := len(failing.got())
	working.Store(true)
	if _, err := webhook.NewService(h.store).SetEnabled(t.Context(), "w1", subID, true, audit.Event{Workspace: "w1"}); err != nil {
		t.Fatal(err)
	}
	h.d.Notify()
	if d, _ := h.finished(kept[0]); d.Status != store.DeliveryDelivered || len(failing.got()) <= before {
		t.Fatalf("the kept delivery after enabling: %+v", d)
	}
}

// subscribeWith subscribes w1 to events at endpoint.
func (h *harness) subscribeWith(endpoint string, events ...string) string {
	h.t.Helper()
	id := uuid.NewString()
	err := h.store.CreateSubscription(h.t.Context(), store.Subscription{
		ID: id, WorkspaceID: "w1", Endpoint: endpoint, Protocol: webhook.ProtocolHTTP, EventNames: events,
		Status: store.SubscriptionActive, CreatedAt: time.Now(),
	}, 0, audit.Event{At: time.Now(), Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: "w1"})
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}
