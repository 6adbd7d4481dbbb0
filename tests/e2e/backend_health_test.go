package e2e

import (
	"encoding/json"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// The reference Caddyfile's passive health check: a backend that fails
// this many requests within failWindow is left out until they are that
// old.
const (
	maxFails   = 3
	failWindow = 10 * time.Second
)

// TestFailingBackendIsLeftOut (fourth review, finding 2): a backend that
// passes /readyz but answers every request 500 is taken out of the
// rotation like one that refuses connections. With least_conn alone it
// took 737 of 1,200 requests: failing fast, it always had the fewest in
// flight. Now it gets at most maxFails of them per failWindow of the run,
// and the healthy backend the rest.
func TestFailingBackendIsLeftOut(t *testing.T) {
	t.Parallel()
	failing := hdctest.NewStandIn(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		problem.Write(w, problem.New(http.StatusInternalServerError, problem.CodeInternalError, "The stand-in fails every request."))
	}))
	s := hdctest.StartStackWithStandIns(t, nil, failing)
	waitInRotation(t, s, failing)
	c := s.NewClient("failing-backend")
	tk := loginPast(t, s, c)

	const requests = 1000
	before := failing.Served.Load() // the logins loginPast sent it
	start := time.Now()
	failed := 0
	for range requests {
		r := s.Send(c, false, "GET", hdctest.SubsPath, nil, map[string]string{hdctest.Authorization: "Bearer " + tk.AccessToken})
		switch r.Status {
		case http.StatusOK:
		case http.StatusInternalServerError:
			failed++
		default:
			t.Fatalf("GET subscriptions: %s", r)
		}
	}
	elapsed := time.Since(start)
	bound := maxFails * int(math.Ceil(elapsed.Seconds()/failWindow.Seconds()))
	got := int(failing.Served.Load() - before)
	t.Logf("%d requests in %v: the failing backend got %d (bound %d), the healthy one the rest", requests, elapsed.Round(time.Millisecond), got, bound)
	if got > bound || failed != got {
		t.Fatalf("the failing backend got %d of %d requests (%d answered 500), want at most %d", got, requests, failed, bound)
	}
}

// TestStalledBackendCostsTheTimeout (fourth review, finding 7): a backend
// that takes a request and never answers costs that request the edge's
// answer timeout (HDC_BACKEND_ANSWER_TIMEOUT), a 504 problem, not as long as
// it stalls; and it counts as failed, so that it is left out after
// maxFails of them. Every request counts, the logins too: when the first
// logins meet the stalled backend maxFails times, it is left out before
// the loop begins.
func TestStalledBackendCostsTheTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	stalled := hdctest.NewStandIn(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // until the edge gives up
	}))
	s := hdctest.StartStackWithStandIns(t, []string{"HDC_BACKEND_ANSWER_TIMEOUT=" + timeout.String()}, stalled)
	s.HTTP.Timeout = 30 * time.Second // the stall's length without the timeout
	waitInRotation(t, s, stalled)
	c := s.NewClient("stalled-backend")

	start, timeouts := time.Now(), 0
	send := func(method, path string, body []byte, h map[string]string) *hdctest.Response {
		began := time.Now()
		r := s.Send(c, false, method, path, body, h)
		if took := time.Since(began); r.Status == http.StatusGatewayTimeout {
			timeouts++
			testkit.WantProblem(t, r.Status, r.Header, r.Body, http.StatusGatewayTimeout, problem.CodeUpstreamError)
			if took < timeout || took > timeout+time.Second {
				t.Fatalf("a request the stalled backend took was answered after %v, want the timeout, %v", took, timeout)
			}
		}
		return r
	}
	var tk hdctest.Tokens
	testkit.Eventually(t, time.Minute, "a login through the healthy backend", func() bool {
		r := send("POST", hdctest.LoginPath, []byte(`{"client_id":"`+c.ID+`","client_secret":"`+c.Secret+`"}`), nil)
		return r.Status == http.StatusOK && json.Unmarshal(r.Body, &tk) == nil
	})
	for range 40 {
		r := send("GET", hdctest.SubsPath, nil, map[string]string{hdctest.Authorization: "Bearer " + tk.AccessToken})
		if r.Status != http.StatusOK && r.Status != http.StatusGatewayTimeout {
			t.Fatalf("GET subscriptions: %s", r)
		}
	}
	bound := maxFails * int(math.Ceil(time.Since(start).Seconds()/failWindow.Seconds()))
	t.Logf("a login and 40 requests: %d answered 504 after the timeout (bound %d); the stalled backend took %d", timeouts, bound, stalled.Served.Load())
	if timeouts == 0 || timeouts > bound || int64(timeouts) != stalled.Served.Load() {
		t.Fatalf("%d requests timed out, the stalled backend took %d; want 1 to %d, all of them", timeouts, stalled.Served.Load(), bound)
	}
}

// waitInRotation waits until the edge's active health check has found the
// stand-in ready, so that it is one of the backends a request may go to.
func waitInRotation(t *testing.T, s *hdctest.Stack, si *hdctest.StandIn) {
	t.Helper()
	s.WaitFor("the edge to check the stand-in's /readyz", func() bool { return si.Ready.Load() >= 2 })
}

// loginPast logs c in, again until the login reaches the stack's own
// backend: a stand-in may answer the first.
func loginPast(t *testing.T, s *hdctest.Stack, c *hdctest.APIClient) hdctest.Tokens {
	t.Helper()
	var tk hdctest.Tokens
	testkit.Eventually(t, time.Minute, "a login through the healthy backend", func() bool {
		r := s.Send(c, false, "POST", hdctest.LoginPath, []byte(`{"client_id":"`+c.ID+`","client_secret":"`+c.Secret+`"}`), nil)
		return r.Status == http.StatusOK && json.Unmarshal(r.Body, &tk) == nil
	})
	return tk
}
