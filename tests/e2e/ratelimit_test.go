package e2e

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// The fleet's limit the tests set: 100 reads a second, a burst of 10.
const (
	testReadRate  = 100
	testReadBurst = 10
)

// fleetLimitEnv is the environment of two edges counting reads at the
// test's limit in the Redis of redisEnv (hdctest.RedisEnv).
func fleetLimitEnv(redisEnv []string) []string {
	return append([]string{"HDC_RATELIMIT_EDGES=2", "HDC_RATELIMIT_READS=" + itoa(testReadRate),
		"HDC_RATELIMIT_READS_BURST=" + itoa(testReadBurst)}, redisEnv...)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestRateLimitFleet: two edges count one client's reads in Redis at 100
// a second. Its requests, at 150 a second for 10 s, spread evenly over
// both edges and then all on one, are served at the limit (1,000 ± 10 %
// of 10 s, the burst aside), the rest refused 429 rate_limited with
// Retry-After, every answer carrying RateLimit-Policy and RateLimit that
// an RFC 9651 parser reads. Another client's requests meanwhile are none
// refused; its 99th percentile, alone and beside the limited one, is
// logged.
func TestRateLimitFleet(t *testing.T) {
	env := fleetLimitEnv(hdctest.RedisEnv(t))
	s := hdctest.StartStackEnv(t, nil, env)
	second, _ := s.StartEdgeEnv("edge-2", env...)
	edges := []string{s.Edge, second}
	other := s.NewClient("rl-other")
	otherTk := s.Login(other, false, "")
	alone := drive(s, edges, otherTk, "reads", 20, 5*time.Second)
	checkNoneRefused(t, "the other client alone", alone)

	refused := 0
	for _, tc := range []struct {
		name  string
		bases []string
		procs []string
	}{{"spread over both edges", edges, []string{"hdc-edge", "hdc-edge-2"}}, {"all on one edge", edges[:1], []string{"hdc-edge"}}} {
		t.Run(tc.name, func(t *testing.T) {
			c := s.NewClient("rl-" + tc.name[:3])
			tk := s.Login(c, false, "")
			defer func() { checkLimitedLogged(t, s, c.ID, tc.procs) }()
			var beside *load
			done := make(chan struct{})
			go func() { defer close(done); beside = drive(s, edges, otherTk, "reads", 20, 10*time.Second) }()
			l := drive(s, tc.bases, tk, "reads", 150, 10*time.Second)
			<-done
			checkLimited(t, l, testReadRate, testReadBurst)
			refused += l.statuses[http.StatusTooManyRequests]
			checkNoneRefused(t, "the other client beside it", beside)
			t.Logf("the other client's p99: %v alone, %v beside the limited one (%.2f×)", alone.p99(), beside.p99(),
				float64(beside.p99())/float64(max(alone.p99(), 1)))
		})
	}
	counted := 0
	for _, m := range s.EdgeMetrics {
		counted += hdctest.ScrapeMetric(http.DefaultClient, m+"/metrics", `hdc_edge_rate_limited_requests_total{class="reads",reason="rate"}`)
	}
	if counted != refused {
		t.Errorf("the edges count %d requests limited, the clients got %d refusals", counted, refused)
	}
}

// checkLimitedLogged checks that each edge of procs logged client's
// refusals in one line (at most one a minute for a client).
func checkLimitedLogged(t *testing.T, s *hdctest.Stack, client string, procs []string) {
	t.Helper()
	for _, p := range procs {
		n := 0
		for _, line := range strings.Split(s.Output(p), "\n") {
			if strings.Contains(line, "client over its limit") && strings.Contains(line, client) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s logged %d lines naming the limited client, want 1", p, n)
		}
	}
}

// checkLimited checks that l, a client's run over its limit, was served
// at rate a second (burst aside, ± 10 %) and refused the rest with
// rate_limited, every answer's fields as the draft says.
func checkLimited(t *testing.T, l *load, rate, burst int) {
	t.Helper()
	served, refused := l.statuses[http.StatusOK], l.statuses[http.StatusTooManyRequests]
	want := float64(rate)*l.elapsed.Seconds() + float64(burst)
	t.Logf("%d sent in %v: %d served (want %.0f ± 10%%), %d refused 429; statuses %v", l.sent, l.elapsed.Round(time.Millisecond),
		served, want, refused, l.statuses)
	if math.Abs(float64(served)-want) > 0.1*want {
		t.Errorf("%d served, want %.0f ± 10%%", served, want)
	}
	if served+refused != l.sent {
		t.Errorf("answers other than 200 and 429: %v", l.statuses)
	}
	for _, e := range l.errs {
		t.Error(e)
	}
}

// checkNoneRefused checks that l was all served.
func checkNoneRefused(t *testing.T, who string, l *load) {
	t.Helper()
	if l.statuses[http.StatusOK] != l.sent || len(l.errs) > 0 {
		t.Errorf("%s: %d sent, statuses %v; %v", who, l.sent, l.statuses, l.errs)
	}
}
