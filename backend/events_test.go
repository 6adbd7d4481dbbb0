package backend

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestEventsToSubscribers: an event published on the internal listener
// reaches the workspace's subscribers, and the subscription list shows
// how deliveries went (delivered; disabled after a 410).
func TestEventsToSubscribers(t *testing.T) {
	h := start(t, func(c *Config) {
		c.WebhookAllowNets = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		c.WebhookBackoffBase, c.WebhookBackoffMax = 10*time.Millisecond, 50*time.Millisecond
		c.WebhookPollInterval = 20 * time.Millisecond
	})
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		if r.URL.Path == "/gone" {
			w.WriteHeader(http.StatusGone)
		}
	}))
	defer receiver.Close()
	as := h.as(h.login(h.client("acme"), ""))
	h.client("globex")
	for _, body := range []string{
		`{"endpoint":"` + receiver.URL + `/ok","event_names":["receipt.created"],"signing_key":"acme-signing-key-0123"}`,
		`{"endpoint":"` + receiver.URL + `/gone"}`,
	} {
		if res := h.postJSON(contract.PathSubscriptions, body, as...); res.StatusCode != 200 {
			t.Fatalf("register: %d %s", res.StatusCode, res.body)
		}
	}

	publish := func(body string, headers ...string) response {
		return h.do("POST", h.internal+contract.PathEvents, strings.NewReader(body), append([]string{"Content-Type", "application/json"}, headers...)...)
	}
	res := publish(`{"type":"receipt.created","workspace_id":"acme","data":{"receipt_id":"r-1"}}`)
	var pub webhook.Published
	res.json(t, &pub)
	if res.StatusCode != http.StatusAccepted || pub.ID == "" || pub.Deliveries != 2 {
		t.Fatalf("publish: %d %s", res.StatusCode, res.body)
	}
	// Another workspace's event reaches none of acme's subscriptions.
	publish(`{"type":"receipt.created","workspace_id":"globex","data":{}}`).json(t, &pub)
	if pub.Deliveries != 0 {
		t.Fatalf("globex's event has %d deliveries", pub.Deliveries)
	}

	wantProblem(t, publish(`{"type":"receipt.voided","workspace_id":"acme","data":{}}`), 400, "unknown_event")
	wantProblem(t, publish(`{"type":"receipt.created","workspace_id":"nobody","data":{}}`), 404, "unknown_workspace")
	wantProblem(t, publish(`{"type":"receipt.created","workspace_id":"acme","data":[]}`), 400, "invalid_request")
	wantProblem(t, publish(`{"type":"receipt.created","workspace_id":"acme","data":{"x":1}`), 400, "invalid_json")
	big := `{"type":"receipt.created","workspace_id":"acme","data":{"x":"` + strings.Repeat("a", 64<<10) + `"}}`
	wantProblem(t, publish(big), 413, "payload_too_large")
	wantProblem(t, h.do("POST", h.internal+contract.PathEvents, strings.NewReader(`{}`), "Content-Type", "text/plain"), 415, "unsupported_media_type")
	wantProblem(t, h.do("POST", h.public+contract.PathEvents, strings.NewReader(`{}`), "Content-Type", "application/json"), 404, "not_found")

	var list webhook.List
	testkit.Eventually(t, 30*time.Second, "both deliveries", func() bool {
		h.do("GET", h.public+contract.PathSubscriptions, nil, as...).json(t, &list)
		return list.Subscriptions[0].LastDeliveryOutcome != nil && list.Subscriptions[1].Status == "disabled"
	})
	ok, gone := list.Subscriptions[0], list.Subscriptions[1]
	if *ok.LastDeliveryOutcome != "delivered" || ok.Status != "active" || *gone.LastDeliveryOutcome != "http_410" ||
		time.Since(*ok.LastDeliveryAt) > time.Minute {
		t.Fatalf("subscriptions after delivery: %+v %+v", ok, gone)
	}
	if n := received.Load(); n != 2 {
		t.Fatalf("the receiver got %d requests, want 2", n)
	}
	// The disabled subscription gets nothing more.
	publish(`{"type":"user.delete","workspace_id":"acme","data":{}}`).json(t, &pub)
	if pub.Deliveries != 0 {
		t.Fatalf("user.delete has %d deliveries after the 410", pub.Deliveries)
	}

	metrics := h.do("GET", h.internal+contract.PathMetrics, nil)
	for _, want := range []string{
		`hdc_backend_webhook_events_total{type="receipt.created"} 2`,
		`hdc_backend_webhook_deliveries_total{outcome="delivered",protocol="http"} 1`,
		`hdc_backend_webhook_deliveries_total{outcome="disabled",protocol="http"} 1`,
		`hdc_backend_webhook_attempts_total{protocol="http",result="http_410"} 1`,
		"hdc_backend_webhook_queue_depth 0",
		"hdc_backend_webhook_oldest_pending_age_seconds 0",
	} {
		if !bytes.Contains(metrics.body, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
