package tests

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestRevocationTakesEffectWithinSeconds (hardening, "also"): revoking a
// sharing grant, then disabling a client, refuses their access tokens on
// every route through the edge within 5 s, not when the tokens expire;
// the client's token for its own workspace outlives the grant.
func TestRevocationTakesEffectWithinSeconds(t *testing.T) {
	s := startStack(t)
	a, b := s.newClient("rev-a"), s.newClient("rev-b")
	recB := s.upload(b, s.login(b, false, ""), false, []byte("b's consultation"), "")
	var grant struct {
		GrantID    string `json:"grant_id"`
		SharingKey string `json:"sharing_key"`
	}
	s.hdc(&grant, "sharing", "grant", "--workspace", b.Workspace, "--client", a.ID)
	own, shared := s.login(a, false, ""), s.login(a, false, grant.SharingKey)
	recA := s.upload(a, own, false, []byte("a's consultation"), "")

	s.hdc(nil, "sharing", "revoke", "--grant", grant.GrantID)
	t.Logf("a revoked grant refused on every route after %v", s.refusedWithin(a, shared, recB, 5*time.Second))
	s.wantServed(a, own, recA)

	s.hdc(nil, "clients", "disable", "--client", a.ID)
	t.Logf("a disabled client refused on every route after %v", s.refusedWithin(a, own, recA, 5*time.Second))
}

// TestReusedRefreshRevokesTheLogin (second review, finding 5): after a
// thief refreshes with a stolen refresh token and the victim presents it
// again, the login is revoked: the thief's new access token is refused on
// every route within 5 s, as is the victim's, while another login of the
// same client goes on.
func TestReusedRefreshRevokesTheLogin(t *testing.T) {
	s := startStack(t)
	c := s.newClient("rev-reuse")
	victim, other := s.login(c, false, ""), s.login(c, false, "")
	record := s.upload(c, victim, false, []byte("a consultation"), "")
	h := bearer(victim)
	h["Client-Id"] = c.ID
	body := []byte(`{"refresh_token":"` + victim.RefreshToken + `"}`)
	thief := s.tokens("the thief's refresh", s.send(c, false, "POST", refreshPath, body, h))
	s.wantServed(c, thief, record)
	expectProblem(t, s.send(c, false, "POST", refreshPath, body, h), http.StatusUnauthorized, "invalid_refresh_token")
	t.Logf("the thief's access token refused on every route after %v", s.refusedWithin(c, thief, record, 5*time.Second))
	s.refusedWithin(c, victim, record, time.Second)
	s.wantServed(c, other, record)
}

// routeStatuses calls every route that takes an access token as c with tk
// and returns the statuses.
func (s *stack) routeStatuses(c *apiClient, tk tokens, record string) map[string]int {
	s.t.Helper()
	upload, ctype := multipartUpload([]byte("one more file"))
	uploadHeader := bearer(tk)
	uploadHeader["Content-Type"] = ctype
	return map[string]int{
		"retrieve":    s.send(c, false, "GET", retrievePath+"?identifier="+url.QueryEscape(record), nil, bearer(tk)).status,
		"upload":      s.send(c, false, "POST", uploadPath, upload, uploadHeader).status,
		"subscribe":   s.send(c, false, "POST", subsPath, []byte(`{"endpoint":"https://rev.example.org/hook"}`), bearer(tk)).status,
		"list":        s.send(c, false, "GET", subsPath, nil, bearer(tk)).status,
		"unsubscribe": s.send(c, false, "DELETE", subsPath+"/no-such-subscription", nil, bearer(tk)).status,
	}
}

// refusedWithin waits until every route answers tk with 401, and fails
// the test unless that happens within limit.
func (s *stack) refusedWithin(c *apiClient, tk tokens, record string, limit time.Duration) time.Duration {
	s.t.Helper()
	start := time.Now()
	for {
		statuses := s.routeStatuses(c, tk, record)
		refused := 0
		for _, st := range statuses {
			if st == http.StatusUnauthorized {
				refused++
			}
		}
		took := time.Since(start)
		switch {
		case refused == len(statuses):
			return took
		case took > limit:
			s.t.Fatalf("after %v: %v, want 401 on every route", took, statuses)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// wantServed fails unless no route refuses tk.
func (s *stack) wantServed(c *apiClient, tk tokens, record string) {
	s.t.Helper()
	for route, st := range s.routeStatuses(c, tk, record) {
		if st == http.StatusUnauthorized || st >= 500 {
			s.t.Fatalf("%s: %d, want it served", route, st)
		}
	}
}
