package admin

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// TestStatusesAreTheStores: the statuses the API's queries take are the
// store's, the delivery log's the log's, and a verified trail's and the
// audit search's orders the trail's.
func TestStatusesAreTheStores(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		api, want []string
	}{
		{"clients", adminapi.ClientStatuses, []string{string(store.ClientActive), string(store.ClientDisabled)}},
		{"grants", adminapi.GrantStatuses, []string{string(store.GrantActive), string(store.GrantRevoked)}},
		{"subscriptions", adminapi.SubscriptionStatuses, []string{string(store.SubscriptionActive), string(store.SubscriptionDisabled)}},
		{"deliveries", adminapi.DeliveryStatuses, asStrings(webhook.DeliveryStatuses)},
		{"trails", []string{adminapi.TrailOK, adminapi.TrailBroken}, []string{trail.StatusOK, trail.StatusBroken}},
		{"audit orders", []string{adminapi.AuditOldest, adminapi.AuditNewest}, []string{trail.OrderOldest, trail.OrderNewest}},
	} {
		if !slices.Equal(tt.api, tt.want) {
			t.Errorf("%s: the API's %q, the store's %q", tt.name, tt.api, tt.want)
		}
	}
}

// asStrings returns ss as strings.
func asStrings[S ~string](ss []S) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, string(s))
	}
	return out
}

// TestDeliveryLogAsTheClients: the Admin API shows a subscription as the
// workspace's own list does, with its workspace and since when it fails,
// and its delivery log as
// the subscription's client reads it: the mapping to the API's types
// keeps the public API's JSON byte for byte.
func TestDeliveryLogAsTheClients(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 15, 14, 2, 0, 123000, time.UTC)
	sub := store.Subscription{ID: "s-1", WorkspaceID: "w1", Endpoint: "https://example.org/hook", Protocol: "https",
		EventNames: []string{"user.delete", "appointment.created"}, Status: store.SubscriptionDisabled, SigningKey: "k",
		CreatedAt: at, LastDeliveryAt: at, LastDeliveryOutcome: "http_503", DisabledReason: "gone", FailingSince: at}
	next := "c-2"
	page := webhook.DeliveryPage{Next: &next, Deliveries: []webhook.Delivery{
		{ID: "d-1", EventID: "msg_d-1", EventType: "user.delete", Status: "failed", CreatedAt: at, DeliveredAt: &at, Attempts: 2, NextAttemptAt: &at, LastOutcome: &next},
		{ID: "d-2", EventID: "msg_d-2", Status: "pending", CreatedAt: at},
	}}
	code, body := 503, "down"
	detail := webhook.DeliveryDetail{Delivery: page.Deliveries[0], AttemptList: []webhook.AttemptView{
		{Number: 1, StartedAt: at, DurationMS: 12, StatusCode: &code, Outcome: "http_503", ResponseBody: &body},
		{Number: 2, StartedAt: at, Outcome: "timeout"},
	}}
	for _, tt := range []struct {
		name        string
		domain, api any
	}{
		{"a subscription", struct {
			WorkspaceID string `json:"workspace_id"`
			webhook.Summary
			FailingSince time.Time `json:"failing_since"`
		}{sub.WorkspaceID, webhook.SummaryOf(sub), at}, subscriptionOut(sub)},
		{"a page of the log", page, deliveryPageOut(page)},
		{"an empty page", webhook.DeliveryPage{Deliveries: []webhook.Delivery{}}, deliveryPageOut(webhook.DeliveryPage{Deliveries: []webhook.Delivery{}})},
		{"a delivery with its attempts", detail, deliveryDetailOut(detail)},
	} {
		want, _ := json.Marshal(tt.domain)
		got, err := json.Marshal(tt.api)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: the API's\n%s (%v), the public API's\n%s", tt.name, got, err, want)
		}
	}
}
