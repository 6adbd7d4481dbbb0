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
// and give an event up after 3 s; an attempt may wait a minute for its
// answer, so that a delivery to a receiver that holds it stays pending.
var webhookEnv = []string{"HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms",
	"HDC_WEBHOOK_BACKOFF_BASE=50ms", "HDC_WEBHOOK_BACKOFF_MAX=250ms", "HDC_WEBHOOK_GIVE_UP_AFTER=3s",
	"HDC_WEBHOOK_TIMEOUT=60s", "HDC_WEBHOOK_LEASE=90s"}

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

// holdingReceiver is a webhook receiver on loopback that holds each
// request unanswered until it is released.
type holdingReceiver struct {
	srv     *httptest.Server
	held    atomic.Int64
	release chan struct{}
}

func newHoldingReceiver(t *testing.T) *holdingReceiver {
	rc := &holdingReceiver{release: make(chan struct{})}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.held.Add(1)
		select {
		case <-rc.release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	t.Cleanup(rc.let) // before Close, which waits for the held requests
	return rc
}

// let answers the held requests, and those to come at once.
func (rc *holdingReceiver) let() {
	select {
	case <-rc.release:
	default:
		close(rc.release)
	}
}

// subscribe subscribes a new client of workspace to appointment.created
// at endpoint, and returns the subscription's id.
func subscribe(t *testing.T, s *hdctest.Stack, workspace, endpoint string) (*hdctest.APIClient, string) {
	c := s.NewClient(workspace)
	tk := s.Login(c, true, "")
	sub := s.Send(c, true, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+endpoint+`","protocol":"http",`+
		`"event_names":["appointment.created"],"signing_key":"whsec-for-the-console-test"}`), hdctest.Bearer(tk))
	id, _ := sub.JSON(t)["id"].(string)
	if sub.Status != 200 || id == "" {
		t.Fatalf("subscribe: %s", sub)
	}
	return c, id
}

// deleteInConsole: a receiver holds the one delivery of a subscription,
// pending; alice deletes the subscription at the keyboard after a
// confirmation that names that delivery, dropped. The webhooks page,
// reloaded, lists the subscription no more, and the trail holds one
// deletion.
func deleteInConsole(t *testing.T, b *hdctest.Browser, s *hdctest.Stack) {
	rc := newHoldingReceiver(t)
	c, id := subscribe(t, s, "clinic-held", rc.srv.URL+"/hook")
	s.HDC(nil, "events", "publish", "--workspace", c.Workspace, "--type", "appointment.created", "--data", `{"appointment_id":"a-2"}`)
	s.WaitFor("the receiver to hold the delivery", func() bool { return rc.held.Load() >= 1 })
	b.Open("/webhooks/" + id)
	b.Press("#delete-subscription", "#consequence")
	if got := b.Text("#consequence"); !strings.Contains(got, "1 delivery still to be sent, dropped") ||
		!strings.Contains(b.Text("#confirm-deliveries tbody"), "pending") {
		t.Fatalf("the deletion's confirmation names no pending delivery: %s", b.Text("main"))
	}
	b.Check("delete-confirm")
	b.Press("#confirm", "#subscriptions")
	rc.let()
	for range 2 {
		if strings.Contains(b.Text("#subscriptions"), id) {
			t.Fatalf("the webhooks page still lists %s after its deletion", id)
		}
		b.Check("")
		b.Reload()
	}
	b.Open("/audit?agent=" + alice)
	hdctest.ConsoleAudit(t, b, alice+" deleted the subscription "+id)
}

// recoverInConsole: a client of the stack subscribes a receiver that
// fails; alice watches the event's delivery given up in the delivery log,
// reads its attempts (their status, never the answer of a receiver on
// loopback, which only the allow-list admits), and once the receiver is
// fixed recovers it from the subscription's page; the receiver gets it,
// the log shows it delivered, and the audit search shows her recovery. It
// returns the subscription's id.
func recoverInConsole(t *testing.T, b *hdctest.Browser, s *hdctest.Stack) string {
	rc := newFailingReceiver(t)
	c, id := subscribe(t, s, "clinic-hooks", rc.srv.URL+"/hook")
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
	b.Reload() // the recovery's page, reloaded, sends nothing again (the trail holds one recovery, below)
	b.Check("")
	testkit.Eventually(t, time.Minute, "the recovered delivery delivered", func() bool {
		b.Open("/webhooks/" + id + "?status=delivered")
		return rc.received.Load() >= 1 && strings.Contains(b.Text("#deliveries tbody"), "delivered")
	})
	b.Check("subscription")
	b.Open("/audit?agent=" + alice)
	hdctest.ConsoleAudit(t, b, alice+" recovered the failed deliveries of the subscription "+id)
	return id
}
