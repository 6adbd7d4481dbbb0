package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestWebhookDisableFailing: through the edge and the backend, an
// endpoint whose attempts all fail (they time out) for the disable period
// (3 s here) is disabled with the reason "failing"; the workspace's other
// subscription, which asked for subscription.disabled, receives it,
// verified by the standardwebhooks libraries (Go and npm); PATCH refuses
// another member (400) and another workspace (404); PATCH enabled=true
// turns it back on and its kept deliveries reach the endpoint, which
// answers now.
func TestWebhookDisableFailing(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms",
		"HDC_WEBHOOK_TIMEOUT=1s", "HDC_WEBHOOK_BACKOFF_BASE=200ms", "HDC_WEBHOOK_BACKOFF_MAX=500ms",
		"HDC_WEBHOOK_DISABLE_AFTER=3s")
	a, b := s.NewClient("disable-a"), s.NewClient("disable-b")
	ta, tb := s.Login(a, false, ""), s.Login(b, false, "")
	const downKey, toldKey = "whsec-of-the-endpoint-down", "whsec-of-the-endpoint-told"
	down, told := hdctest.NewWebhookReceiver(t, downKey, 0), hdctest.NewWebhookReceiver(t, toldKey, 0)
	down.Hold() // requests time out unanswered
	register := func(body string) string {
		r := s.Send(a, false, "POST", hdctest.SubsPath, []byte(body), hdctest.Bearer(ta))
		id, _ := r.JSON(t)["id"].(string)
		if r.Status != 200 || id == "" {
			t.Fatalf("register %s: %s", body, r)
		}
		return id
	}
	downID := register(`{"endpoint":"` + down.Srv.URL + `/hook","event_names":["appointment.created"],"signing_key":"` + downKey + `"}`)
	toldID := register(`{"endpoint":"` + told.Srv.URL + `/told","event_names":["subscription.disabled"],"signing_key":"` + toldKey + `"}`)
	for i := range 3 {
		s.HDC(nil, "events", "publish", "--workspace", a.Workspace, "--type", "appointment.created",
			"--data", `{"appointment_id":"a-`+string(rune('1'+i))+`"}`)
	}

	subscription := func(id string) map[string]any {
		r := s.Send(a, false, "GET", hdctest.SubsPath, nil, hdctest.Bearer(ta))
		var list struct{ Subscriptions []map[string]any }
		if r.Status != 200 || json.Unmarshal(r.Body, &list) != nil {
			t.Fatalf("list: %s", r)
		}
		for _, sub := range list.Subscriptions {
			if sub["id"] == id {
				return sub
			}
		}
		t.Fatalf("%s is not listed: %s", id, r)
		return nil
	}
	testkit.Eventually(t, time.Minute, "the failing endpoint disabled", func() bool { return subscription(downID)["status"] == "disabled" })
	if sub := subscription(downID); sub["disabled_reason"] != "failing" {
		t.Fatalf("disabled subscription %v", sub)
	}
	if sub := subscription(toldID); sub["status"] != "active" || sub["disabled_reason"] != nil {
		t.Fatalf("the other subscription %v", sub)
	}
	testkit.Eventually(t, time.Minute, "subscription.disabled delivered", func() bool { return len(told.Deliveries()) > 0 })
	verifyDisabledNotice(t, told.Deliveries()[0], toldKey, downID)

	path := hdctest.SubsPath + "/" + downID
	hdctest.ExpectProblem(t, s.Send(a, false, "PATCH", path, []byte(`{"enabled":true,"endpoint":"x"}`), hdctest.Bearer(ta)), 400, "invalid_request")
	hdctest.ExpectProblem(t, s.Send(b, false, "PATCH", path, []byte(`{"enabled":true}`), hdctest.Bearer(tb)), 404, "not_found")
	down.Release()
	r := s.Send(a, false, "PATCH", path, []byte(`{"enabled":true}`), hdctest.Bearer(ta))
	if on := r.JSON(t); r.Status != 200 || on["status"] != "active" || on["disabled_reason"] != nil {
		t.Fatalf("PATCH enabled=true: %s", r)
	}
	// The three kept deliveries arrive, each verified, with their own ids.
	// An attempt still held when the endpoint is released is answered then
	// and counts: the endpoint may answer before the PATCH.
	testkit.Eventually(t, time.Minute, "the kept deliveries delivered", func() bool {
		ids := map[string]bool{}
		for _, d := range down.Deliveries() {
			if !d.Answered.IsZero() && d.VerifyErr == nil {
				ids[d.Header.Get("webhook-id")] = true
			}
		}
		return len(ids) == 3 && s.QueueDepth() == 0
	})
}

// verifyDisabledNotice checks the subscription.disabled delivery d, signed
// with key, about subscription id: the Go library's verdict and npm
// standardwebhooks', and its data.
func verifyDisabledNotice(t *testing.T, d hdctest.WebhookDelivery, key, id string) {
	t.Helper()
	if d.VerifyErr != nil {
		t.Fatalf("the Go standardwebhooks library refused the notice: %v", d.VerifyErr)
	}
	in, _ := json.Marshal([]map[string]any{{"key": key, "body": string(d.Body), "headers": map[string]string{
		"webhook-id": d.Header.Get("webhook-id"), "webhook-timestamp": d.Header.Get("webhook-timestamp"),
		"webhook-signature": d.Header.Get("webhook-signature")}}})
	out, err := hdctest.Node(t, in, "webhook.mjs", "verify")
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		OK      bool `json:"ok"`
		Payload struct {
			Type string `json:"type"`
			Data struct {
				SubscriptionID string `json:"subscription_id"`
				Reason         string `json:"reason"`
				FailingSince   string `json:"failing_since"`
			} `json:"data"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != 1 || !results[0].OK {
		t.Fatalf("npm standardwebhooks: %s", out)
	}
	p := results[0].Payload
	if p.Type != "subscription.disabled" || p.Data.SubscriptionID != id || p.Data.Reason != "failing" || !strings.HasPrefix(p.Data.FailingSince, "20") {
		t.Fatalf("the notice's payload: %+v", p)
	}
}
