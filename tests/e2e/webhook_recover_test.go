package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// recorded is a request a receiver got.
type recorded struct {
	Key     string            `json:"key"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// TestE2EWebhookRecover: a receiver is down (its port closed) while 50
// events are published; the delivery log shows each failed or given up;
// the receiver comes back and one recover call brings all 50, each
// verified by npm standardwebhooks and carrying its delivery's original
// webhook-id. Another workspace's client gets 404 on every route of the
// log. The figures (recovered, received, duplicates, time to all) are
// logged.
func TestE2EWebhookRecover(t *testing.T) {
	t.Parallel()
	const events = 50
	s := hdctest.StartStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms",
		"HDC_WEBHOOK_BACKOFF_BASE=50ms", "HDC_WEBHOOK_BACKOFF_MAX=250ms", "HDC_WEBHOOK_GIVE_UP_AFTER=3s")
	a, b := s.NewClient("recover-a"), s.NewClient("recover-b")
	ta, tb := s.Login(a, true, ""), s.Login(b, false, "")
	addr, listen := testkit.DownAddr(t) // the receiver is down: its port refuses connections
	const key = "whsec-for-the-recovery-test"
	sub := s.Send(a, true, "POST", hdctest.SubsPath, []byte(`{"endpoint":"http://`+addr+`/hook","protocol":"http",`+
		`"event_names":["appointment.created"],"signing_key":"`+key+`"}`), hdctest.Bearer(ta))
	if sub.Status != 200 {
		t.Fatalf("register: %s", sub)
	}
	id, _ := sub.JSON(t)["id"].(string)
	since := time.Now().UTC().Add(-time.Second).Format(time.RFC3339Nano)
	for i := range events {
		s.HDC(nil, "events", "publish", "--workspace", a.Workspace, "--type", "appointment.created", "--data", fmt.Sprintf(`{"appointment_id":"a-%d"}`, i))
	}
	logPath := hdctest.SubsPath + "/" + id + "/deliveries"
	var page struct {
		Deliveries []struct {
			ID       string `json:"id"`
			EventID  string `json:"event_id"`
			Status   string `json:"status"`
			Attempts int    `json:"attempts"`
		}
	}
	testkit.Eventually(t, time.Minute, "the log shows 50 deliveries given up", func() bool {
		r := s.Send(a, false, "GET", logPath+"?status=given_up&limit=250", nil, hdctest.Bearer(ta))
		return r.Status == 200 && json.Unmarshal(r.Body, &page) == nil && len(page.Deliveries) == events
	})
	webhookIDs := map[string]bool{}
	for _, d := range page.Deliveries {
		if d.Attempts < 1 || d.EventID != "msg_"+d.ID {
			t.Fatalf("a delivery given up: %+v", d)
		}
		webhookIDs[d.EventID] = true
	}
	one := s.Send(a, true, "GET", logPath+"/"+page.Deliveries[0].ID, nil, hdctest.Bearer(ta))
	var detail struct {
		AttemptList []struct {
			Outcome string `json:"outcome"`
		} `json:"attempt_list"`
	}
	if one.Status != 200 || json.Unmarshal(one.Body, &detail) != nil || len(detail.AttemptList) != page.Deliveries[0].Attempts ||
		detail.AttemptList[0].Outcome != "connection_error" {
		t.Fatalf("a delivery with its attempts: %s", one)
	}
	t.Logf("a delivery given up while the receiver was down: %d attempts, the first connection_error", len(detail.AttemptList))
	crossWorkspace(t, s, b, tb, id, page.Deliveries[0].ID)

	got, mu := receiverOn(t, listen(), key)
	start := time.Now()
	h := hdctest.Bearer(ta)
	h["Idempotency-Key"] = "recover-1"
	rec := s.Send(a, true, "POST", hdctest.SubsPath+"/"+id+"/recover", []byte(`{"since":"`+since+`"}`), h)
	if rec.Status != 202 || rec.JSON(t)["recovered"] != float64(events) {
		t.Fatalf("recover: %s", rec)
	}
	testkit.Eventually(t, time.Minute, "every event received", func() bool {
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, r := range *got {
			seen[r.Headers["webhook-id"]] = true
		}
		return len(seen) == events
	})
	elapsed := time.Since(start)
	// The same call again under its Idempotency-Key is answered as the
	// first was, and sends nothing more.
	again := s.Send(a, true, "POST", hdctest.SubsPath+"/"+id+"/recover", []byte(`{"since":"`+since+`"}`), h)
	if again.Status != 202 || again.JSON(t)["recovered"] != float64(events) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("recover again under its Idempotency-Key: %s %v", again, again.Header)
	}
	mu.Lock()
	all := append([]recorded(nil), *got...)
	mu.Unlock()
	verifyRecovered(t, all, webhookIDs)
	t.Logf("recovered %d; received %d requests for %d events (%d duplicates) in %v after the recover call",
		events, len(all), events, len(all)-events, elapsed.Round(time.Millisecond))
}

// receiverOn starts a receiver on ln that records every request and
// answers 204.
func receiverOn(t *testing.T, ln net.Listener, key string) (*[]recorded, *sync.Mutex) {
	t.Helper()
	var (
		mu  sync.Mutex
		got []recorded
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, recorded{key, map[string]string{"webhook-id": r.Header.Get("webhook-id"),
			"webhook-timestamp": r.Header.Get("webhook-timestamp"), "webhook-signature": r.Header.Get("webhook-signature")}, string(body)})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return &got, &mu
}

// verifyRecovered has npm standardwebhooks verify every request and checks
// that each carries one of the original webhook-ids.
func verifyRecovered(t *testing.T, all []recorded, webhookIDs map[string]bool) {
	t.Helper()
	in, _ := json.Marshal(all)
	out, err := hdctest.Node(t, in, "webhook.mjs", "verify")
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(all) {
		t.Fatalf("webhook.mjs printed %s", out)
	}
	for i, r := range results {
		if !r.OK || !webhookIDs[all[i].Headers["webhook-id"]] {
			t.Fatalf("request %d (webhook-id %s): verified %v, an original id %v", i, all[i].Headers["webhook-id"], r.OK, webhookIDs[all[i].Headers["webhook-id"]])
		}
	}
}

// crossWorkspace: another workspace's client gets 404 not_found on every
// route under this subscription (its log, the delivery, redelivery,
// recovery, a test event, a new signing key, PATCH, DELETE); that none
// changed it shows in what follows: the recovery would be 409 on a
// disabled subscription, and a new key would fail the verification.
func crossWorkspace(t *testing.T, s *hdctest.Stack, other *hdctest.APIClient, tk hdctest.Tokens, sub, delivery string) {
	t.Helper()
	base := hdctest.SubsPath + "/" + url.PathEscape(sub)
	for _, c := range []struct{ method, path, body string }{
		{"GET", base + "/deliveries", ""},
		{"GET", base + "/deliveries/" + delivery, ""},
		{"POST", base + "/deliveries/" + delivery + "/redeliver", ""},
		{"POST", base + "/recover", `{"since":"2000-01-01T00:00:00Z"}`},
		{"POST", base + "/test", ""},
		{"POST", base + "/signing-key", `{}`},
		{"PATCH", base, `{"enabled":false}`},
		{"DELETE", base, ""},
	} {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		hdctest.ExpectProblem(t, s.Send(other, false, c.method, c.path, body, hdctest.Bearer(tk)), 404, "not_found")
	}
}
