package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestRateLimitOverrideFleet: an operator lowers one client's reads to 5 a
// second with hdc clients limits set, then to 8 through the Admin API
// (PUT /admin/v1/clients/{id}/limits); each time both edges enforce it
// within a second, their answers naming the new policy, and refuse the
// client past it, while the fleet's default still applies to the others.
func TestRateLimitOverrideFleet(t *testing.T) {
	env := fleetLimitEnv(hdctest.RedisEnv(t))
	s := hdctest.StartStackEnv(t, nil, env)
	second, _ := s.StartEdgeEnv("edge-2", env...)
	edges := []string{s.Edge, second}
	c, other := s.NewClient("rl-override"), s.NewClient("rl-override-other")
	tk, otherTk := s.Login(c, false, ""), s.Login(other, false, "")
	const byDefault = `"reads";q=100;w=1`
	waitPolicy(t, s, edges, tk, byDefault)
	for _, step := range []struct {
		how   string
		set   func()
		quota int
	}{
		{"hdc clients limits set", func() { s.HDC(nil, "clients", "limits", "set", "--client", c.ID, "--rate", "reads=5:5") }, 5},
		{"the Admin API", func() {
			setLimits(t, s, c.ID, contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassReads: {PerSecond: 8, Burst: 8}}})
		}, 8},
	} {
		step.set()
		took := waitPolicy(t, s, edges, tk, `"reads";q=`+strconv.Itoa(step.quota)+`;w=1`)
		t.Logf("%s: both edges enforce the override %v after the change returned (goal: within 1 s)", step.how, took.Round(time.Millisecond))
		if took > time.Second {
			t.Errorf("%s: the override reached both edges after %v, want within 1 s", step.how, took)
		}
		l := drive(s, edges, tk, "reads", 50, 2*time.Second)
		if l.statuses[http.StatusTooManyRequests] == 0 || l.statuses[http.StatusOK] > 3*step.quota+step.quota {
			t.Errorf("%s: 50 a second for 2 s against %d a second: %v", step.how, step.quota, l.statuses)
		}
	}
	waitPolicy(t, s, edges, otherTk, byDefault) // another client keeps the default
}

// waitPolicy waits up to 5 s until every edge answers tk's reads under
// the policy want, and returns how long it took.
func waitPolicy(t *testing.T, s *hdctest.Stack, edges []string, tk hdctest.Tokens, want string) time.Duration {
	t.Helper()
	start := time.Now()
	for _, e := range edges {
		for {
			r, err := s.Request(e, "GET", hdctest.SubsPath, nil, hdctest.Bearer(tk))
			if err != nil {
				t.Fatal(err)
			}
			got := r.Header.Get("RateLimit-Policy")
			if got == want {
				break
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("%s: RateLimit-Policy %q after %v, want %q", e, got, time.Since(start), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return time.Since(start)
}

// setLimits sets client's limits through the Admin API, as an operator
// (a certificate of the hop's authority issued by hdc tls issue).
func setLimits(t *testing.T, s *hdctest.Stack, client string, l contract.Limits) {
	t.Helper()
	s.HDC(nil, "tls", "issue", "--role", string(pki.Operator), "--name", "alice", "--dir", s.Hop)
	s.Creds.NotePEMFile(t, "a private key of the hop", filepath.Join(s.Hop, "alice-key.pem"))
	cfg, err := pki.ClientTLS(filepath.Join(s.Hop, "alice.pem"), filepath.Join(s.Hop, "alice-key.pem"), filepath.Join(s.Hop, pki.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: cfg}}
	body, _ := json.Marshal(l)
	req, err := http.NewRequest(http.MethodPut, s.Internal+"/admin/v1/clients/"+url.PathEscape(client)+"/limits", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT the limits: %d %s", resp.StatusCode, answer)
	}
}
