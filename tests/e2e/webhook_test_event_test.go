package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// testEventAnswer is the answer to a test event.
type testEventAnswer struct {
	EventID    string `json:"event_id"`
	Outcome    string `json:"outcome"`
	Status     int    `json:"status"`
	DurationMS int64  `json:"duration_ms"`
}

// TestWebhookTestEvent (issue 49: a test event to a new endpoint): a test
// event to a new endpoint is answered within the attempt's timeout with
// the endpoint's status, its webhook.test message verified by the npm
// standardwebhooks and svix libraries; an endpoint that answers 503 is
// told as http_503, one that does not answer as a timeout within the
// timeout; another workspace's subscription is 404; nothing is retried.
func TestWebhookTestEvent(t *testing.T) {
	const timeout = 2 * time.Second
	s := hdctest.StartStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_TIMEOUT="+timeout.String(), "HDC_WEBHOOK_LEASE=3s")
	c := s.NewClient("test-event")
	other := s.NewClient("test-event-other")
	tk, otherTk := s.Login(c, false, ""), s.Login(other, false, "")
	const key = "whsec_ZJdQqjBJ2NSp+Zgz5cJ7nHbWKvJuAxDdZJdQqjBJ2NQ="
	ok := hdctest.NewWebhookReceiver(t, key, 0)
	unavailable := newStatusReceiver(t, http.StatusServiceUnavailable, 0)
	slow := newStatusReceiver(t, http.StatusNoContent, timeout+2*time.Second)
	subscribe := func(url string) string {
		r := s.Send(c, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+url+`/hook","signing_key":"`+key+`"}`), hdctest.Bearer(tk))
		if r.Status != 200 {
			t.Fatalf("subscribe: %s", r)
		}
		id, _ := r.JSON(t)["id"].(string)
		return id
	}
	test := func(id string, tk hdctest.Tokens) (*hdctest.Response, testEventAnswer, time.Duration) {
		start := time.Now()
		r := s.Send(c, false, "POST", hdctest.SubsPath+"/"+id+"/test", nil, hdctest.Bearer(tk))
		var a testEventAnswer
		if r.Status == 200 {
			if err := json.Unmarshal(r.Body, &a); err != nil {
				t.Fatalf("test: %s", r)
			}
		}
		return r, a, time.Since(start)
	}

	okID := subscribe(ok.Srv.URL)
	r, a, took := test(okID, tk)
	if r.Status != 200 || a.Outcome != "delivered" || a.Status != http.StatusNoContent || !strings.HasPrefix(a.EventID, "msg_") || took > timeout {
		t.Fatalf("a test event to a new endpoint: %s in %v", r, took)
	}
	ds := ok.Deliveries()
	if len(ds) != 1 || ds[0].VerifyErr != nil || ds[0].Header.Get("webhook-id") != a.EventID || !strings.Contains(string(ds[0].Body), `"type":"webhook.test"`) {
		t.Fatalf("the receiver got %d requests: %+v", len(ds), ds)
	}
	checks, _ := json.Marshal([]rotationCheck{{Key: key, Body: string(ds[0].Body), Headers: map[string]string{
		"webhook-id": ds[0].Header.Get("webhook-id"), "webhook-timestamp": ds[0].Header.Get("webhook-timestamp"),
		"webhook-signature": ds[0].Header.Get("webhook-signature")}}})
	for _, lib := range []string{"standardwebhooks", "svix"} {
		out, err := hdctest.Node(t, checks, "webhook.mjs", "verify", lib)
		if err != nil || !strings.Contains(string(out), `"ok":true`) {
			t.Fatalf("npm %s: %s %v", lib, out, err)
		}
	}
	checkTestEventLikeReal(t, s, c, ok)

	// Encrypted: the answer is sealed and opens to the same form.
	sealed := s.Send(c, true, "POST", hdctest.SubsPath+"/"+okID+"/test", nil, hdctest.Bearer(tk))
	var again testEventAnswer
	if sealed.Status != 200 || json.Unmarshal(sealed.Body, &again) != nil || again.Outcome != "delivered" || again.EventID == a.EventID {
		t.Fatalf("an encrypted test event: %s", sealed)
	}
	if r, a, took := test(subscribe(unavailable.URL), tk); r.Status != 200 || a.Outcome != "http_503" || a.Status != 503 || took > timeout {
		t.Fatalf("an endpoint answering 503: %s in %v", r, took)
	}
	if r, a, took := test(subscribe(slow.URL), tk); r.Status != 200 || a.Outcome != "timeout" || a.Status != 0 || took > timeout+time.Second {
		t.Fatalf("an endpoint that does not answer: %s in %v", r, took)
	}
	if r, _, _ := test(okID, otherTk); r.Status != 404 {
		t.Fatalf("another workspace's subscription: %s", r)
	}
	// A test event is no delivery of the outbox: nothing is pending, and
	// the 503 endpoint got the one request.
	if n := s.QueueDepth(); n != 0 {
		t.Fatalf("%d deliveries pending, want none", n)
	}
	if n := unavailable.n.Load(); n != 1 {
		t.Fatalf("the 503 endpoint got %d requests, want 1", n)
	}
}

// statusReceiver answers every request with a status after a delay,
// counting them.
type statusReceiver struct {
	*httptest.Server
	n atomic.Int64
}

func newStatusReceiver(t *testing.T, status int, delay time.Duration) *statusReceiver {
	rc := &statusReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.n.Add(1)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// checkTestEventLikeReal publishes a real event to c's workspace, which
// the receiver ok (whose one request so far is a test event) is
// subscribed to, and holds the test event's body to the real one's: both
// are docs/openapi.yaml's Event, and their timestamps have the same
// precision, the microsecond the stores keep a published event's time to.
func checkTestEventLikeReal(t *testing.T, s *hdctest.Stack, c *hdctest.APIClient, ok *hdctest.WebhookReceiver) {
	t.Helper()
	status, body := s.InternalCall(s.InternalClient(pki.Publisher), "POST", s.Internal+"/internal/v1/events",
		`{"workspace_id":"`+c.Workspace+`","type":"appointment.created","data":{"appointment_id":"a-1"}}`)
	if status != http.StatusAccepted {
		t.Fatalf("publish: %d %s", status, body)
	}
	testkit.Eventually(t, 30*time.Second, "the real event's delivery", func() bool { return len(ok.Deliveries()) == 2 })
	doc, err := hdctest.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var stamps [2]time.Time
	for i, d := range ok.Deliveries() {
		if err := doc.CheckJSON("/components/schemas/Event", d.Body, string(d.Body)); err != nil {
			t.Error(err)
		}
		var e struct {
			Timestamp string `json:"timestamp"`
		}
		if json.Unmarshal(d.Body, &e) != nil {
			t.Fatalf("a delivery's body: %s", d.Body)
		}
		if stamps[i], err = time.Parse(time.RFC3339Nano, e.Timestamp); err != nil {
			t.Fatalf("the timestamp of %s: %v", d.Body, err)
		}
	}
	if !stamps[1].Equal(stamps[1].Truncate(time.Microsecond)) {
		t.Fatalf("the real event's timestamp %s is not a whole microsecond: the test's premise is out of date", stamps[1].Format(time.RFC3339Nano))
	}
	if !stamps[0].Equal(stamps[0].Truncate(time.Microsecond)) {
		t.Fatalf("the test event's timestamp %s is finer than a real event's (%s), which is a whole microsecond",
			stamps[0].Format(time.RFC3339Nano), stamps[1].Format(time.RFC3339Nano))
	}
}
