package backend

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/internal/contract"
)

func TestLogin(t *testing.T) {
	h := start(t, nil)
	c := h.client("acme")

	pair := h.login(c, "")
	if pair.ExpiresIn != 1800 || pair.RefreshExpiresIn != 30*24*3600 || !strings.HasPrefix(pair.RefreshToken, "hdc_rt_") {
		t.Fatalf("pair = %+v", pair)
	}
	cl := h.verify(pair.AccessToken, false)
	if cl.Subject != c.ClientID || cl.WS != "acme" || cl.ID == "" || cl.NotBefore == nil ||
		cl.Expiry.Time().Sub(cl.IssuedAt.Time()) != 30*time.Minute {
		t.Fatalf("claims = %+v", cl)
	}
	res := h.postJSON(contract.PathLogin, map[string]string{"client_id": c.ClientID, "client_secret": c.ClientSecret})
	if res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers = %v", res.Header)
	}

	wrong := h.postJSON(contract.PathLogin, map[string]string{"client_id": c.ClientID, "client_secret": "hdc_cs_wrong"})
	wantProblem(t, wrong, 401, "invalid_client")
	unknown := h.postJSON(contract.PathLogin, map[string]string{"client_id": "nobody", "client_secret": c.ClientSecret})
	wantProblem(t, unknown, 401, "invalid_client")
	if !bytes.Equal(wrong.body, unknown.body) {
		t.Fatalf("unknown client and wrong secret answer differently:\n%s\n%s", wrong.body, unknown.body)
	}
	if bytes.Contains(wrong.body, []byte("hdc_cs_")) {
		t.Fatal("the answer quotes the secret")
	}
	long := h.postJSON(contract.PathLogin, map[string]string{"client_id": c.ClientID, "client_secret": strings.Repeat("x", 600)})
	wantProblem(t, long, 401, "invalid_client")

	off := h.client("acme")
	if err := h.srv.Identity().DisableClient(context.Background(), audittest.Operator, off.ClientID); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, h.postJSON(contract.PathLogin, map[string]string{"client_id": off.ClientID, "client_secret": off.ClientSecret}), 401, "invalid_client")

	for _, tt := range []struct {
		name, body, ct string
		status         int
		code           string
	}{
		{"missing secret", `{"client_id":"x"}`, "application/json", 400, "invalid_request"},
		{"unknown member", `{"client_id":"x","client_secret":"y","scope":"all"}`, "application/json", 400, "invalid_request"},
		{"empty sharing key", `{"client_id":"x","client_secret":"y","sharing_key":""}`, "application/json", 400, "invalid_request"},
		{"bad JSON", `{"client_id":`, "application/json", 400, "invalid_json"},
		{"wrong type", `{"client_id":1,"client_secret":"y"}`, "application/json", 400, "invalid_json"},
		{"form", `client_id=x`, "application/x-www-form-urlencoded", 415, "unsupported_media_type"},
		{"too large", `{"client_id":"` + strings.Repeat("x", 70<<10) + `"}`, "application/json", 413, "payload_too_large"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, h.do("POST", h.public+contract.PathLogin, strings.NewReader(tt.body), "Content-Type", tt.ct), tt.status, tt.code)
		})
	}
	wantProblem(t, h.do("GET", h.public+contract.PathLogin, nil), 405, "method_not_allowed")
}

func TestLoginWithSharingKey(t *testing.T) {
	h := start(t, nil)
	a, b := h.client("wa"), h.client("wb")
	g, err := h.srv.Identity().GrantSharing(context.Background(), audittest.Operator, "wb", a.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if cl := h.verify(h.login(a, g.SharingKey).AccessToken, false); cl.WS != "wb" || cl.Subject != a.ClientID {
		t.Fatalf("shared login claims = %+v", cl)
	}
	// The key is bound to a: b cannot use it, nor a with another secret.
	wantProblem(t, h.postJSON(contract.PathLogin, map[string]string{"client_id": b.ClientID, "client_secret": b.ClientSecret, "sharing_key": g.SharingKey}), 401, "invalid_sharing_key")
	wantProblem(t, h.postJSON(contract.PathLogin, map[string]string{"client_id": a.ClientID, "client_secret": b.ClientSecret, "sharing_key": g.SharingKey}), 401, "invalid_client")
	wantProblem(t, h.postJSON(contract.PathLogin, map[string]string{"client_id": a.ClientID, "client_secret": a.ClientSecret, "sharing_key": "hdc_sk_guess"}), 401, "invalid_sharing_key")
	if err := h.srv.Identity().RevokeSharing(context.Background(), audittest.Operator, g.GrantID); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, h.postJSON(contract.PathLogin, map[string]string{"client_id": a.ClientID, "client_secret": a.ClientSecret, "sharing_key": g.SharingKey}), 401, "invalid_sharing_key")
}

// TestLoginThrottle: failed logins are counted per source address and per
// (source, client): a client locked out from one address logs in from its
// own, and failures from anywhere else never lock it out.
func TestLoginThrottle(t *testing.T) {
	h := start(t, func(c *Config) {
		c.LoginFailuresPerClient = 3
		c.LoginFailuresPerAddress = 6
		c.LoginFailureWindow = time.Hour
	})
	a, b, c := h.client("w"), h.client("w"), h.client("w")
	from := func(addr string) []string { return []string{contract.HeaderClientIP, addr} }
	fail := func(cr string, addr string) response {
		return h.postJSON(contract.PathLogin, map[string]string{"client_id": cr, "client_secret": "hdc_cs_wrong"}, from(addr)...)
	}
	ok := func(cr identity.Credentials, addr string) response {
		return h.postJSON(contract.PathLogin, map[string]string{"client_id": cr.ClientID, "client_secret": cr.ClientSecret}, from(addr)...)
	}
	// Successful logins do not count.
	for range 10 {
		if res := ok(a, "203.0.113.1"); res.StatusCode != 200 {
			t.Fatalf("successful login %d: %s", res.StatusCode, res.body)
		}
	}
	// Per (source, client): three failures from .1, then even the right
	// secret from .1 waits.
	for range 3 {
		wantProblem(t, fail(a.ClientID, "203.0.113.1"), 401, "invalid_client")
	}
	res := ok(a, "203.0.113.1")
	wantProblem(t, res, 429, "too_many_attempts")
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 3600 {
		t.Fatalf("Retry-After = %q", res.Header.Get("Retry-After"))
	}
	// The same client from its own address is not affected.
	if res := ok(a, "203.0.113.2"); res.StatusCode != 200 {
		t.Fatalf("the client from another address: %d %s", res.StatusCode, res.body)
	}
	// Nor another client from the first address, below that address's limit.
	if res := ok(b, "203.0.113.1"); res.StatusCode != 200 {
		t.Fatalf("another client from the same address: %d", res.StatusCode)
	}
	// Per address: failures spread over client ids add up (3 already from .1).
	for i := range 3 {
		wantProblem(t, fail("made-up-"+strconv.Itoa(i), "203.0.113.1"), 401, "invalid_client")
	}
	wantProblem(t, ok(c, "203.0.113.1"), 429, "too_many_attempts")
	if res := ok(c, "203.0.113.3"); res.StatusCode != 200 {
		t.Fatalf("login from another address: %d %s", res.StatusCode, res.body)
	}
}

func TestRefresh(t *testing.T) {
	h := start(t, nil)
	c := h.client("acme")
	pair := h.login(c, "")
	refresh := func(p auth.TokenPair, body any, extra ...string) response {
		headers := append(h.as(p), "Client-Id", c.ClientID)
		return h.postJSON(contract.PathRefresh, body, append(headers, extra...)...)
	}

	res := refresh(pair, map[string]string{"refresh_token": pair.RefreshToken, "access_token": pair.AccessToken})
	if res.StatusCode != 200 {
		t.Fatalf("refresh: %d %s", res.StatusCode, res.body)
	}
	var next auth.TokenPair
	res.json(t, &next)
	if next.RefreshToken == pair.RefreshToken || next.AccessToken == pair.AccessToken || next.ExpiresIn != 1800 {
		t.Fatalf("refresh did not rotate: %+v", next)
	}
	if cl := h.verify(next.AccessToken, false); cl.Subject != c.ClientID || cl.WS != "acme" {
		t.Fatalf("refreshed claims = %+v", cl)
	}

	// Request errors.
	wantProblem(t, h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": next.RefreshToken}, h.as(next)...), 400, "missing_client_id")
	wantProblem(t, h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": next.RefreshToken}, append(h.as(next), "Client-Id", "someone-else")...), 401, "client_mismatch")
	wantProblem(t, refresh(next, map[string]string{"refresh_token": next.RefreshToken, "access_token": pair.AccessToken}), 401, "invalid_token")
	wantProblem(t, refresh(next, map[string]string{}), 400, "invalid_request")
	wantProblem(t, refresh(next, map[string]string{"refresh_token": next.RefreshToken, "extra": "x"}), 400, "invalid_request")
	wantProblem(t, refresh(next, map[string]string{"refresh_token": "hdc_rt_unknown"}), 401, "invalid_refresh_token")
	wantProblem(t, h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": next.RefreshToken}, "Client-Id", c.ClientID), 401, "unauthenticated")

	// None of the refused requests consumed the token.
	res = refresh(next, map[string]string{"refresh_token": next.RefreshToken})
	if res.StatusCode != 200 {
		t.Fatalf("refresh after refused attempts: %d %s", res.StatusCode, res.body)
	}
	var third auth.TokenPair
	res.json(t, &third)

	// Reuse of a rotated token revokes the family: the newest token dies too.
	wantProblem(t, refresh(third, map[string]string{"refresh_token": pair.RefreshToken}), 401, "invalid_refresh_token")
	wantProblem(t, refresh(third, map[string]string{"refresh_token": third.RefreshToken}), 401, "invalid_refresh_token")
	// A fresh login is a new family and works.
	fresh := h.login(c, "")
	if res := refresh(fresh, map[string]string{"refresh_token": fresh.RefreshToken}); res.StatusCode != 200 {
		t.Fatalf("new family: %d", res.StatusCode)
	}
}

func TestRefreshRefusedForDisabledClientAndRevokedGrant(t *testing.T) {
	h := start(t, nil)
	a := h.client("wa")
	h.client("wb")
	g, err := h.srv.Identity().GrantSharing(context.Background(), audittest.Operator, "wb", a.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	shared := h.login(a, g.SharingKey)
	own := h.login(a, "")
	refresh := func(p auth.TokenPair) response {
		return h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": p.RefreshToken}, append(h.as(p), "Client-Id", a.ClientID)...)
	}
	if err := h.srv.Identity().RevokeSharing(context.Background(), audittest.Operator, g.GrantID); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, refresh(shared), 401, "invalid_sharing_key")
	// The family is revoked with the grant.
	wantProblem(t, refresh(shared), 401, "invalid_refresh_token")
	if res := refresh(own); res.StatusCode != 200 {
		t.Fatalf("own-workspace refresh: %d %s", res.StatusCode, res.body)
	}
	own2 := h.login(a, "")
	if err := h.srv.Identity().DisableClient(context.Background(), audittest.Operator, a.ClientID); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, refresh(own2), 401, "invalid_client")
}

// TestRefreshCompat covers the first version's refresh route: the refresh
// token is the credential, a Client-Id or key owner given must be its
// client, and a token rotated on either route is reuse on the other.
func TestRefreshCompat(t *testing.T) {
	h := start(t, nil)
	c, other := h.client("acme"), h.client("beta")
	pair := h.login(c, "")
	compat := func(token string, headers ...string) response {
		return h.postJSON(contract.PathRefreshCompat, map[string]string{"refresh_token": token, "access_token": "expired.or.anything"}, headers...)
	}
	refusals := []struct {
		name   string
		res    response
		status int
		code   string
	}{
		{"unknown token", compat("hdc_rt_unknown"), 401, "invalid_refresh_token"},
		{"another client's Client-Id", compat(pair.RefreshToken, "Client-Id", other.ClientID), 401, "invalid_refresh_token"},
		{"another client's key", compat(pair.RefreshToken, contract.HeaderKeyID, "k-other", contract.HeaderKeyClientID, other.ClientID), 401, "invalid_refresh_token"},
		{"Client-Id and key disagree", compat(pair.RefreshToken, "Client-Id", c.ClientID, contract.HeaderKeyID, "k-other", contract.HeaderKeyClientID, other.ClientID), 401, "client_mismatch"},
		{"Client-Id twice", compat(pair.RefreshToken, "Client-Id", c.ClientID, "Client-Id", c.ClientID), 400, "invalid_request"},
		{"no refresh token", h.postJSON(contract.PathRefreshCompat, map[string]string{}), 400, "invalid_request"},
		{"unknown member", h.postJSON(contract.PathRefreshCompat, map[string]string{"refresh_token": pair.RefreshToken, "x": "y"}), 400, "invalid_request"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) { wantProblem(t, tt.res, tt.status, tt.code) })
	}

	// None of them consumed the token; an empty bearer and a Client-Id
	// of the token's client are what older clients send.
	res := compat(pair.RefreshToken, "Authorization", "Bearer ", "Client-Id", c.ClientID)
	if res.StatusCode != 200 {
		t.Fatalf("compatibility refresh: %d %s", res.StatusCode, res.body)
	}
	var next auth.TokenPair
	res.json(t, &next)
	if cl := h.verify(next.AccessToken, false); cl.Subject != c.ClientID || cl.WS != "acme" || next.RefreshToken == pair.RefreshToken {
		t.Fatalf("refreshed pair %+v, claims %+v", next, cl)
	}
	// Rotated here, the token is reuse on the main route, which revokes
	// the login: the newest token dies on both routes.
	wantProblem(t, h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": pair.RefreshToken},
		append(h.as(next), "Client-Id", c.ClientID)...), 401, "invalid_refresh_token")
	wantProblem(t, compat(next.RefreshToken), 401, "invalid_refresh_token")

	// And the other way round: rotated on the main route, reuse here.
	fresh := h.login(c, "")
	if res := h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": fresh.RefreshToken},
		append(h.as(fresh), "Client-Id", c.ClientID)...); res.StatusCode != 200 {
		t.Fatalf("main refresh: %d %s", res.StatusCode, res.body)
	}
	wantProblem(t, compat(fresh.RefreshToken), 401, "invalid_refresh_token")
}
