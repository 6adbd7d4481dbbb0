package scale

import (
	"net/http"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestRevocationTakesEffectWithinSeconds (hardening, "also"): revoking a
// sharing grant, then disabling a client, refuses their access tokens on
// every route through the edge within 5 s, not when the tokens expire;
// the client's token for its own workspace outlives the grant.
func TestRevocationTakesEffectWithinSeconds(t *testing.T) {
	s := hdctest.StartStack(t)
	a, b := s.NewClient("rev-a"), s.NewClient("rev-b")
	recB := s.Upload(b, s.Login(b, false, ""), false, []byte("b's consultation"), "")
	var grant struct {
		GrantID    string `json:"grant_id"`
		SharingKey string `json:"sharing_key"`
	}
	s.HDC(&grant, "sharing", "grant", "--workspace", b.Workspace, "--client", a.ID)
	own, shared := s.Login(a, false, ""), s.Login(a, false, grant.SharingKey)
	recA := s.Upload(a, own, false, []byte("a's consultation"), "")

	s.HDC(nil, "sharing", "revoke", "--grant", grant.GrantID)
	t.Logf("a revoked grant refused on every route after %v", s.RefusedWithin(a, shared, recB, 5*time.Second))
	s.WantServed(a, own, recA)

	s.HDC(nil, "clients", "disable", "--client", a.ID)
	t.Logf("a disabled client refused on every route after %v", s.RefusedWithin(a, own, recA, 5*time.Second))
}

// TestReusedRefreshRevokesTheLogin (second review, finding 5): after a
// thief refreshes with a stolen refresh token and the victim presents it
// again, the login is revoked: the thief's new access token is refused on
// every route within 5 s, as is the victim's, while another login of the
// same client goes on.
func TestReusedRefreshRevokesTheLogin(t *testing.T) {
	s := hdctest.StartStack(t)
	c := s.NewClient("rev-reuse")
	victim, other := s.Login(c, false, ""), s.Login(c, false, "")
	record := s.Upload(c, victim, false, []byte("a consultation"), "")
	h := hdctest.Bearer(victim)
	h["Client-Id"] = c.ID
	body := []byte(`{"refresh_token":"` + victim.RefreshToken + `"}`)
	thief := s.Tokens("the thief's refresh", s.Send(c, false, "POST", hdctest.RefreshPath, body, h))
	s.WantServed(c, thief, record)
	hdctest.ExpectProblem(t, s.Send(c, false, "POST", hdctest.RefreshPath, body, h), http.StatusUnauthorized, "invalid_refresh_token")
	t.Logf("the thief's access token refused on every route after %v", s.RefusedWithin(c, thief, record, 5*time.Second))
	s.RefusedWithin(c, victim, record, time.Second)
	s.WantServed(c, other, record)
}
