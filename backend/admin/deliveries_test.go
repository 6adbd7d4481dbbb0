package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// failedDeliveries publishes an event to every subscription seeded by
// seedSubscriptions and fails each active one's first attempt with a 503
// and an answer; it returns the deliveries by subscription id.
func failedDeliveries(t *testing.T, a *api, ids []string) map[string]string {
	t.Helper()
	now := time.Now().UTC()
	for i, ws := range []string{"w1", "w2"} {
		if _, err := a.st.PublishEvent(t.Context(), store.Event{ID: "e" + ws, WorkspaceID: ws, Type: "user.delete",
			Data: []byte(`{"n":1}`), CreatedAt: now.Add(time.Duration(i) * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := a.st.ClaimDeliveries(t.Context(), store.Claim{Owner: "test", Now: now.Add(time.Second), LeaseUntil: now.Add(time.Minute), Limit: 10})
	if err != nil || len(ds) != 2 {
		t.Fatalf("claimed %d, %v", len(ds), err)
	}
	out := map[string]string{}
	for _, d := range ds {
		at := store.Attempt{DeliveryID: d.ID, StartedAt: now.Add(time.Second), Duration: time.Second, Outcome: "http_503",
			StatusCode: 503, ResponseBody: "down for maintenance"}
		if err := a.st.FinishAttempt(t.Context(), "test", at, store.Next{Status: store.DeliveryFailed}); err != nil {
			t.Fatal(err)
		}
		out[d.Subscription.ID] = d.ID
	}
	return out
}

// TestDeliveries: both persons read the delivery log of any workspace's
// subscription, a delivery with its attempts; an operator redelivers one
// and recovers the failed ones, each an audit record of the subscription's
// workspace naming her.
func TestDeliveries(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ids := seedSubscriptions(t, a)
	ds := failedDeliveries(t, a, ids)
	sub, d := ids[1], ds[ids[1]] // w2's
	var page adminapi.DeliveryPage
	a.do("auditor", "GET", "/admin/v1/subscriptions/"+sub+"/deliveries?status=given_up", nil).decode(t, 200, &page)
	if len(page.Deliveries) != 1 || page.Deliveries[0].ID != d || page.Next != nil {
		t.Fatalf("w2's given-up deliveries: %+v", page)
	}
	var detail adminapi.DeliveryDetail
	a.do("auditor", "GET", "/admin/v1/subscriptions/"+sub+"/deliveries/"+d, nil).decode(t, 200, &detail)
	if len(detail.AttemptList) != 1 || *detail.AttemptList[0].StatusCode != 503 || *detail.AttemptList[0].ResponseBody != "down for maintenance" {
		t.Fatalf("the delivery: %+v", detail)
	}
	var again adminapi.Delivery
	a.do("operator", "POST", "/admin/v1/subscriptions/"+sub+"/deliveries/"+d+"/redeliver", nil).decode(t, 202, &again)
	if again.ID != d || again.NextAttemptAt == nil || again.EventID != webhook.MessageID(d) {
		t.Fatalf("redelivered: %+v", again)
	}
	var n adminapi.Recovered
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	a.do("operator", "POST", "/admin/v1/subscriptions/"+ids[0]+"/recover", map[string]string{"since": since}).decode(t, 202, &n)
	if n.Recovered != 1 {
		t.Fatalf("recovered %d of w1's, want 1", n.Recovered)
	}
	for ws, want := range map[string]audit.Action{"w2": audit.DeliveryRedeliver, "w1": audit.DeliveryRecover} {
		rs, err := a.st.ListAudit(t.Context(), store.AuditFilter{Workspace: ws, Agent: alice})
		if err != nil || len(rs) != 1 || rs[0].Action != want || rs[0].Person.Name != alice {
			t.Fatalf("%s's trail by alice: %+v, %v", ws, rs, err)
		}
	}
}

// TestDeliveryRefusals: bad input is a problem with a stable code and
// changes nothing; an auditor reads but does not redeliver.
func TestDeliveryRefusals(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ids := seedSubscriptions(t, a)
	ds := failedDeliveries(t, a, ids)
	base := "/admin/v1/subscriptions/" + ids[0]
	unknown := "/admin/v1/subscriptions/5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
	tests := []struct {
		name, who, method, path string
		body                    any
		status                  int
		code                    string
	}{
		{"an auditor's redelivery", "auditor", "POST", base + "/deliveries/" + ds[ids[0]] + "/redeliver", nil, 403, "forbidden"},
		{"an auditor's recovery", "auditor", "POST", base + "/recover", map[string]string{"since": "2026-01-01T00:00:00Z"}, 403, "forbidden"},
		{"another subscription's delivery", "operator", "POST", base + "/deliveries/" + ds[ids[1]] + "/redeliver", nil, 404, "not_found"},
		{"another subscription's delivery read", "auditor", "GET", base + "/deliveries/" + ds[ids[1]], nil, 404, "not_found"},
		{"an unknown subscription's log", "auditor", "GET", unknown + "/deliveries", nil, 404, "not_found"},
		{"an unknown subscription's recovery", "operator", "POST", unknown + "/recover", map[string]string{"since": "2026-01-01T00:00:00Z"}, 404, "not_found"},
		{"a disabled subscription's recovery", "operator", "POST", "/admin/v1/subscriptions/" + ids[2] + "/recover", map[string]string{"since": "2026-01-01T00:00:00Z"}, 409, "conflict"},
		{"a since that is no time", "operator", "POST", base + "/recover", map[string]string{"since": "yesterday"}, 400, "invalid_request"},
		{"a recovery without since", "operator", "POST", base + "/recover", map[string]string{}, 400, "invalid_request"},
		{"an unknown status", "auditor", "GET", base + "/deliveries?status=lost", nil, 400, "invalid_request"},
		{"a cursor not given", "auditor", "GET", base + "/deliveries?cursor=bm9wZQ", nil, 400, "invalid_request"},
		{"an unknown parameter", "auditor", "GET", base + "/deliveries?workspace=w2", nil, 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do(tt.who, tt.method, tt.path, tt.body)
			if r.status != tt.status || r.problemCode() != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
			if strings.Contains(string(r.body), "maintenance") {
				t.Fatalf("a refusal shows an endpoint's answer: %s", r.body)
			}
		})
	}
	for _, sub := range ids[:2] {
		l, _, err := a.st.DeliveryAttempts(t.Context(), map[string]string{ids[0]: "w1", ids[1]: "w2"}[sub], sub, ds[sub])
		if err != nil || l.Status != store.DeliveryLogGivenUp {
			t.Fatalf("after the refusals %s's delivery is %+v, %v", sub, l, err)
		}
	}
}

// TestFleetStatus: both persons read the outbox's queue (the pending
// deliveries of active subscriptions, and the oldest one's creation) and
// the newest checkpoint, none here.
func TestFleetStatus(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	var st adminapi.FleetStatus
	a.do("auditor", "GET", "/admin/v1/fleet/status", nil).decode(t, 200, &st)
	if st.Outbox.Pending != 0 || st.Outbox.OldestPendingAt != nil || st.Checkpoint != nil {
		t.Fatalf("an empty fleet: %+v", st)
	}
	seedSubscriptions(t, a)
	created := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if _, err := a.st.PublishEvent(t.Context(), store.Event{ID: "e1", WorkspaceID: "w1", Type: "user.delete", Data: []byte(`{}`), CreatedAt: created}); err != nil {
		t.Fatal(err)
	}
	a.do("operator", "GET", "/admin/v1/fleet/status", nil).decode(t, 200, &st)
	if st.Outbox.Pending != 1 || st.Outbox.OldestPendingAt == nil || !st.Outbox.OldestPendingAt.Equal(created) {
		t.Fatalf("one pending delivery (w1's active subscription; the disabled one keeps none): %+v", st.Outbox)
	}
}
