package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// internalAnswer is what a service on the backends' network answers: what
// a client must never read through its delivery log.
const internalAnswer = "# HELP an_internal_service_secret of a service only the gateway reaches"

// internalService is a service on loopback answering status with
// internalAnswer, as a metrics endpoint or an admin page would.
func internalService(t *testing.T, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		fmt.Fprintln(w, internalAnswer)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// attemptView is an attempt as the delivery log shows it.
type attemptView struct {
	StatusCode   *int    `json:"status_code"`
	Outcome      string  `json:"outcome"`
	DurationMS   int64   `json:"duration_ms"`
	ResponseBody *string `json:"response_body"`
}

// TestUpWebhookAnswersStayPrivate (fifth review, finding 1): on `hdc up
// --allow-loopback-webhooks`, a client cannot point a subscription at the
// gateway's own listeners (the edge's site and metrics, the backend's
// listeners), and the delivery log of a subscription to another service on
// loopback, which only the allow-list admits, shows its status, outcome
// and duration, never its answer; the test event tells no more.
func TestUpWebhookAnswersStayPrivate(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	dir := t.TempDir()
	listen, metrics, backendAddr, internal := testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"HDC_BACKEND_INTERNAL=https://" + internal}
	startUp(t, hdc, dir, env, []string{"up", "--allow-loopback-webhooks", "--listen", listen, "--metrics", metrics,
		"--backend-listen", backendAddr, "--internal-listen", internal}, os.Stderr)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(hdc, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	call := func(args ...string) string {
		t.Helper()
		out, err := run(append([]string{"call"}, args...)...)
		if err != nil {
			t.Fatalf("hdc call %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	publish := func() {
		t.Helper()
		if out, err := run("events", "publish", "--workspace", "demo", "--type", "appointment.created", "--data", `{"appointment_id":"a-1"}`); err != nil {
			t.Fatalf("hdc events publish: %v\n%s", err, out)
		}
	}
	// firstAttempt waits for the first attempt of subscription id's first
	// delivery, as its client reads it.
	firstAttempt := func(id string) attemptView {
		t.Helper()
		var got attemptView
		testkit.Eventually(t, 30*time.Second, "an attempt in the delivery log", func() bool {
			var page struct{ Deliveries []struct{ ID string } }
			if json.Unmarshal([]byte(call("GET", hdctest.SubsPath+"/"+id+"/deliveries")), &page) != nil || len(page.Deliveries) == 0 {
				return false
			}
			var d struct {
				AttemptList []attemptView `json:"attempt_list"`
			}
			if json.Unmarshal([]byte(call("GET", hdctest.SubsPath+"/"+id+"/deliveries/"+page.Deliveries[0].ID)), &d) != nil || len(d.AttemptList) == 0 {
				return false
			}
			got = d.AttemptList[0]
			return true
		})
		return got
	}
	register := func(endpoint string) (string, error) {
		out, err := run("call", "POST", hdctest.SubsPath, "--data", `{"endpoint":"`+endpoint+`","event_names":["appointment.created"]}`)
		var reg struct{ ID string }
		_ = json.Unmarshal([]byte(out), &reg)
		if err != nil {
			return out, err
		}
		return reg.ID, nil
	}

	// The gateway's own listeners: the review's reproduction first.
	for _, own := range []string{"http://" + metrics + "/metrics", "http://" + listen + "/hook",
		"https://" + internal + "/internal/v1/events", "https://" + backendAddr + "/hook"} {
		id, err := register(own)
		if err == nil {
			publish()
			a := firstAttempt(id)
			body := ""
			if a.ResponseBody != nil {
				body = *a.ResponseBody
			}
			t.Fatalf("%s, a listener of the gateway, registered; its delivery log reads %s %q", own, a.Outcome, hdctest.Tail(body, 200))
		}
		if !strings.Contains(id, "endpoint_not_allowed") || !strings.Contains(id, "gateway") {
			t.Fatalf("registering %s: %s, want 400 endpoint_not_allowed naming the gateway's listeners", own, id)
		}
	}

	// Another service on loopback, admitted by the allow-list alone: its
	// status, outcome and duration, never its answer.
	svc := internalService(t, http.StatusInternalServerError)
	id, err := register(svc.URL + "/hook")
	if err != nil {
		t.Fatalf("registering a loopback receiver on hdc up --allow-loopback-webhooks: %v %s", err, id)
	}
	publish()
	a := firstAttempt(id)
	if a.StatusCode == nil || *a.StatusCode != http.StatusInternalServerError || a.Outcome != "http_500" {
		t.Fatalf("the attempt: %+v", a)
	}
	if a.ResponseBody != nil {
		t.Fatalf("the delivery log shows the answer of a service the allow-list admits: %q", *a.ResponseBody)
	}
	var answer map[string]any
	if err := json.Unmarshal([]byte(call("POST", hdctest.SubsPath+"/"+id+"/test")), &answer); err != nil {
		t.Fatal(err)
	}
	members := make([]string, 0, len(answer))
	for k := range answer {
		members = append(members, k)
	}
	slices.Sort(members)
	if !slices.Equal(members, []string{"duration_ms", "event_id", "outcome", "status"}) || answer["outcome"] != "http_500" {
		t.Fatalf("the test event's answer: %v", answer)
	}
}
