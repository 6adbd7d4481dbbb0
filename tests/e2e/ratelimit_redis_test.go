package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestRateLimitRedisDown: Redis is killed while a client's requests, over
// its limit, flow through both edges. No answer is a 5xx; within a second
// each edge counts alone (hdc_edge_rate_limit_shared 0) and says so in one
// log line (a line per outage, never one a request); Redis back, both
// count in it again within 5 s.
func TestRateLimitRedisDown(t *testing.T) {
	r := hdctest.StartRedis(t)
	env := fleetLimitEnv(r.EdgeEnv())
	s := hdctest.StartStackEnv(t, nil, env)
	s.Creds.Add("the rate limits' Redis password", r.Password(t))
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
		checkOneLinePerOutage(t, edge, s.Output(edge))
	}
}

// checkOneLinePerOutage checks that an edge said that Redis does not
// answer once each time it turned to counting alone, not once a request:
// its lines alternate with those that Redis answers again. One outage is
// the killed Redis; a loaded machine can make a call to the Redis that came
// back miss its deadline, which is an outage too, said once.
func checkOneLinePerOutage(t *testing.T, edge, output string) {
	t.Helper()
	down := strings.Count(output, "redis does not answer")
	up := strings.Count(output, "redis answers again")
	t.Logf("%s: %d lines that Redis does not answer, %d that it answers again", edge, down, up)
	if down < 1 || (down != up && down != up+1) {
		t.Errorf("%s logged %d lines that Redis does not answer and %d that it answers again, want one of each per outage", edge, down, up)
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

// TestRateLimitRedisCredentials: the fleet's Redis as docs/deploy.md sets
// it up (scripts/redis.sh: TLS only, the default user off, one ACL user
// with a password on the gateway's keys). Nobody without the password may
// use it, and the edges' user may not FLUSHALL nor touch another key. An
// edge given the user in its rediss:// URL, the password's file and the
// CA counts there (a client's read is in Redis under the client's key, and
// hdc_edge_rate_limit_shared is 1); one given another password, in
// HDC_RATELIMIT_REDIS_PASSWORD, counts alone and says why in its log. The
// password is in no line a process of the stack wrote, in no
// configuration the edges' admin API serves (/config/), on no edge's
// command line, nor in hdc-edge's help.
func TestRateLimitRedisCredentials(t *testing.T) {
	t.Parallel()
	r := hdctest.StartRedis(t)
	password := r.Password(t)
	t.Run("the Redis", func(t *testing.T) {
		ctx := t.Context()
		anonymous := hdctest.RedisConn{URL: "rediss://" + r.URL[strings.Index(r.URL, "@")+1:], CA: r.CA}.Client(t)
		if err := anonymous.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Fatalf("PING without the password: %v, want NOAUTH", err)
		}
		edges := r.Client(t)
		if err := edges.Ping(ctx).Err(); err != nil {
			t.Fatalf("PING as the edges' user: %v", err)
		}
		if err := edges.FlushAll(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
			t.Fatalf("FLUSHALL as the edges' user: %v, want NOPERM", err)
		}
		if err := edges.Set(ctx, "other:key", "1", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
			t.Fatalf("SET of another key as the edges' user: %v, want NOPERM", err)
		}
	})

	limits := []string{"HDC_RATELIMIT_READS=100", "HDC_RATELIMIT_READS_BURST=100"}
	s := hdctest.StartStackEnv(t, nil, append(r.EdgeEnv(), limits...))
	const wrong = "not-the-redis-password"
	s.Creds.Add("the rate limits' Redis password", password)
	s.Creds.Add("a wrong Redis password", wrong)
	second, _ := s.StartEdgeEnv("edge-wrong", append(append(r.EdgeEnv(), limits...),
		"HDC_RATELIMIT_REDIS_PASSWORD_FILE=", "HDC_RATELIMIT_REDIS_PASSWORD="+wrong)...)
	c := s.NewClient("rl-creds")
	tk := s.Login(c, false, "")
	for _, base := range []string{s.Edge, second} {
		resp, err := s.Request(base, "GET", hdctest.SubsPath, nil, hdctest.Bearer(tk))
		if err != nil || resp.Status != http.StatusOK || !strings.Contains(resp.Header.Get("RateLimit-Policy"), `"reads";q=100`) {
			t.Fatalf("a read through %s: %v %v", base, resp, err)
		}
	}
	if err := r.Client(t).Get(t.Context(), "rate:hdc:rl:c:"+c.ID+":reads").Err(); err != nil {
		t.Fatalf("the client's reads are not counted in Redis: %v", err)
	}
	for i, want := range []int{1, 0} {
		if got := hdctest.ScrapeMetric(http.DefaultClient, s.EdgeMetrics[i]+"/metrics", "hdc_edge_rate_limit_shared"); got != want {
			t.Fatalf("edge %d: hdc_edge_rate_limit_shared %d, want %d", i+1, got, want)
		}
	}
	if out := s.Output("hdc-edge-wrong"); !strings.Contains(out, "redis does not answer") || !strings.Contains(out, "WRONGPASS") {
		t.Fatalf("the edge with a wrong password does not say why it counts alone:\n%s", hdctest.Tail(out, 2048))
	}
	checkRedisPasswordHidden(t, s, []string{password, wrong}, []string{s.AdminSocket, filepath.Join(s.Dir, "edge-wrong-admin.sock")})
}

// checkRedisPasswordHidden fails t when one of passwords is in the
// configuration an admin API at one of sockets serves, on the command
// line of an edge of s, or in hdc-edge's help with the password in its
// environment. (s scans its processes' logs for them at cleanup.)
func checkRedisPasswordHidden(t *testing.T, s *hdctest.Stack, passwords, sockets []string) {
	t.Helper()
	var seen []string
	for _, socket := range sockets {
		resp, err := hdctest.UnixClient(socket).Get("http://localhost/config/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), "{env.HDC_RATELIMIT_REDIS_PASSWORD}") {
			t.Fatalf("the admin API at %s serves no rate_limits' configuration: %.300s", socket, body)
		}
		seen = append(seen, "/config/ of "+socket+": "+string(body))
	}
	for _, p := range s.Procs {
		if strings.HasPrefix(p.Name, "hdc-edge") {
			cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.Cmd.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, p.Name+"'s command line: "+string(cmdline))
		}
	}
	for _, args := range [][]string{{"help"}, {"help", "run"}, {"run", "--help"}} {
		cmd := exec.Command(hdctest.Binary(t, "hdc-edge"), args...)
		cmd.Env = append(os.Environ(), "HDC_RATELIMIT_REDIS_PASSWORD="+passwords[0])
		out, _ := cmd.CombinedOutput()
		seen = append(seen, "hdc-edge "+strings.Join(args, " ")+": "+string(out))
	}
	for _, text := range seen {
		for _, pw := range passwords {
			if strings.Contains(text, pw) {
				what, _, _ := strings.Cut(text, ": ")
				t.Errorf("%s shows a Redis password", what)
			}
		}
	}
}
