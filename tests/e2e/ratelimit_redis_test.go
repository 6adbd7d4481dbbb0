package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestRateLimitRedisDown: Redis is killed while a client's requests, over
// its limit, flow through both edges. No answer is a 5xx; within a second
// each edge counts alone (hdc_edge_rate_limit_shared 0) and says so in one
// log line; Redis back, both count in it again within 5 s.
func TestRateLimitRedisDown(t *testing.T) {
	r := hdctest.StartRedis(t)
	env := fleetLimitEnv(r.URL())
	s := hdctest.StartStackEnv(t, nil, env)
	second, _ := s.StartEdgeEnv("edge-2", env...)
	c := s.NewClient("rl-redis")
	tk := s.Login(c, false, "")
	var l *load
	done := make(chan struct{})
	go func() { defer close(done); l = drive(s, []string{s.Edge, second}, tk, "reads", 150, 16*time.Second) }()

	waitShared(t, s, 1, 5*time.Second, "before Redis is killed")
	time.Sleep(3 * time.Second) // traffic counted in Redis for a while
	killed := time.Now()
	r.Stop()
	alone := waitShared(t, s, 0, 5*time.Second, "once Redis is killed")
	t.Logf("both edges count alone %v after Redis was killed (goal: within 1 s)", alone.Sub(killed).Round(time.Millisecond))
	if alone.Sub(killed) > time.Second {
		t.Errorf("counting alone %v after Redis was killed, want within 1 s", alone.Sub(killed))
	}
	time.Sleep(4 * time.Second)
	back := time.Now()
	r.Start()
	shared := waitShared(t, s, 1, 10*time.Second, "once Redis is back")
	t.Logf("both edges count in Redis again %v after it came back (goal: within 5 s)", shared.Sub(back).Round(time.Millisecond))
	if shared.Sub(back) > 5*time.Second {
		t.Errorf("counting in Redis %v after it came back, want within 5 s", shared.Sub(back))
	}
	<-done
	t.Logf("%d sent in %v: statuses %v", l.sent, l.elapsed.Round(time.Millisecond), l.statuses)
	for status, n := range l.statuses {
		if status >= 500 {
			t.Errorf("%d answers %d", n, status)
		}
	}
	for _, e := range l.errs {
		t.Error(e)
	}
	for _, edge := range []string{"hdc-edge", "hdc-edge-2"} {
		if n := strings.Count(s.Output(edge), "redis does not answer"); n != 1 {
			t.Errorf("%s logged %d lines that Redis does not answer, want 1", edge, n)
		}
	}
}

// waitShared waits up to d until every edge's hdc_edge_rate_limit_shared
// is want, and returns when it saw it.
func waitShared(t *testing.T, s *hdctest.Stack, want int, d time.Duration, when string) time.Time {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		all := true
		for _, m := range s.EdgeMetrics {
			if hdctest.ScrapeMetric(http.DefaultClient, m+"/metrics", "hdc_edge_rate_limit_shared") != want {
				all = false
			}
		}
		if all {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not every edge's hdc_edge_rate_limit_shared is %d after %v", when, want, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
