package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// webhookEnv has the stack's backend deliver to loopback, retry at once
// and give an event up after 3 s.
var webhookEnv = []string{"HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms",
	"HDC_WEBHOOK_BACKOFF_BASE=50ms", "HDC_WEBHOOK_BACKOFF_MAX=250ms", "HDC_WEBHOOK_GIVE_UP_AFTER=3s"}

// failingReceiver is a webhook receiver on loopback that answers 503
// until it is fixed, then 204.
type failingReceiver struct {
	srv      *httptest.Server
	fixed    atomic.Bool
	received atomic.Int64
}

func newFailingReceiver(t *testing.T) *failingReceiver {
	rc := &failingReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !rc.fixed.Load() {
			http.Error(w, "the receiver is down", http.StatusServiceUnavailable)
			return
		}
		rc.received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// recoverInConsole: a client of the stack subscribes a receiver that
// fails; alice watches the event's delivery given up in the delivery log,
// reads its attempts (their status, never the answer of a receiver on
// loopback, which only the allow-list admits), and once the receiver is
// fixed recovers it from the subscription's page; the receiver gets it,
// the log shows it delivered, and the audit search shows her recovery. It
// returns the subscription's id.
func recoverInConsole(t *testing.T, b *hdctest.Browser, s *hdctest.Stack) string {
	c := s.NewClient("clinic-hooks")
	tk := s.Login(c, true, "")
	rc := newFailingReceiver(t)
	sub := s.Send(c, true, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+rc.srv.URL+`/hook","protocol":"http",`+
		`"event_names":["appointment.created"],"signing_key":"whsec-for-the-console-test"}`), hdctest.Bearer(tk))
	id, _ := sub.JSON(t)["id"].(string)
	if sub.Status != 200 || id == "" {
		t.Fatalf("subscribe: %s", sub)
	}
	s.HDC(nil, "events", "publish", "--workspace", c.Workspace, "--type", "appointment.created", "--data", `{"appointment_id":"a-1"}`)
	testkit.Eventually(t, time.Minute, "the delivery log to show the delivery given up", func() bool {
		b.Open("/webhooks/" + id + "?status=given_up")
		return strings.Contains(b.Text("#deliveries tbody"), "given_up")
	})
	b.Check("deliveries")
	b.Run(chromedp.Click(chromedp.CSS("#deliveries tbody a")), chromedp.WaitVisible(chromedp.CSS("#attempts")))
	if attempts := b.Text("#attempts"); !strings.Contains(attempts, "503") || strings.Contains(attempts, "the receiver is down") {
		t.Fatalf("the delivery's attempts: %s", attempts)
	}
	b.Check("delivery")

	rc.fixed.Store(true)
	b.Open("/webhooks/" + id)
	b.Run(chromedp.Click(chromedp.CSS("#recover")), chromedp.WaitVisible(chromedp.CSS("#recovered")))
	if got := b.Text("#recovered"); got != "Sent again: 1 deliveries." {
		t.Fatalf("the recovery: %q", got)
	}
	testkit.Eventually(t, time.Minute, "the recovered delivery delivered", func() bool {
		b.Open("/webhooks/" + id + "?status=delivered")
		return rc.received.Load() >= 1 && strings.Contains(b.Text("#deliveries tbody"), "delivered")
	})
	b.Check("subscription")
	b.Open("/audit?agent=" + alice)
	if want := alice + " recovered the failed deliveries of the subscription " + id; !strings.Contains(b.Text("#events"), want) {
		t.Errorf("the audit search shows no %q", want)
	}
	return id
}
