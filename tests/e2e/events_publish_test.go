package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestPublishOverTheListeners (a first deployment, findings 5 and 9): hdc
// events publish, given the internal listeners as the edges' list names
// them, the first one down, publishes the event once, at the stack's
// backend, which delivers it; the backend's log has the attempt's one line
// at info level, naming the delivery, its event, subscription and
// workspace, the attempt, the receiver's status and the duration, and no
// line of the backend holds the payload, the endpoint's query or the
// signing key.
func TestPublishOverTheListeners(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms")
	c := s.NewClient("publish-list")
	const (
		key    = "a-signing-key-of-the-publish-test"
		marker = "a-payload-the-log-never-shows"
		query  = "token=a-query-the-log-never-shows"
	)
	rc := hdctest.NewWebhookReceiver(t, key, 0)
	sub := s.Send(c, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+rc.Srv.URL+`/hook?`+query+`",`+
		`"event_names":["appointment.created"],"signing_key":"`+key+`"}`), hdctest.Bearer(s.Login(c, false, "")))
	if sub.Status != 200 {
		t.Fatalf("subscribe: %s", sub)
	}

	down := "https://" + testkit.FreeAddr(t) // nothing listens there
	out, errOut, err := s.HDCRun("events", "publish", "--backend-internal", down+" "+s.Internal,
		"--workspace", c.Workspace, "--type", "appointment.created", "--data", `{"appointment_id":"`+marker+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	var pub struct {
		ID         string `json:"id"`
		Deliveries int    `json:"deliveries"`
	}
	if err := json.Unmarshal([]byte(out), &pub); err != nil || pub.ID == "" || pub.Deliveries != 1 {
		t.Fatalf("hdc events publish printed %q: %v", out, err)
	}
	if !strings.Contains(errOut, strings.TrimPrefix(down, "https://")) || !strings.Contains(errOut, "trying the next listener") {
		t.Errorf("hdc events publish does not say which listener failed: %q", errOut)
	}

	var line map[string]any
	testkit.Eventually(t, time.Minute, "the delivery's log line", func() bool {
		line = attemptLine(t, s.Output("hdc-backend"), pub.ID)
		return line != nil && len(rc.Deliveries()) > 0
	})
	if n := len(rc.Deliveries()); n != 1 {
		t.Errorf("the receiver got %d deliveries, want 1", n)
	}
	if n := strings.Count(s.Output("hdc-backend"), `"msg":"event published"`); n != 1 {
		t.Errorf("the backend published %d events, want 1", n)
	}
	for k, want := range map[string]any{"level": "info", "msg": "webhook delivered", "workspace_id": c.Workspace,
		"attempt": 1.0, "outcome": "delivered", "status": 204.0} {
		if line[k] != want {
			t.Errorf("the delivery's line has %s %v, want %v: %v", k, line[k], want, line)
		}
	}
	for _, k := range []string{"delivery_id", "subscription_id", "duration"} {
		if line[k] == nil || line[k] == "" {
			t.Errorf("the delivery's line has no %s: %v", k, line)
		}
	}
	for _, secret := range []string{key, marker, query} {
		if strings.Contains(s.Output("hdc-backend"), secret) {
			t.Errorf("the backend's log holds %q", secret)
		}
	}
}

// attemptLine returns the line of log, the backend's, that logs an attempt
// at delivering event, nil if none does yet.
func attemptLine(t *testing.T, log, event string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, `"event_id":"`+event+`"`) || !strings.Contains(l, `"attempt":`) {
			continue
		}
		var line map[string]any
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("a line of the backend is not JSON: %s", l)
		}
		return line
	}
	return nil
}
