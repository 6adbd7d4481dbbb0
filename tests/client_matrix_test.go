package tests

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/testkit"
)

const refreshCompatPath = "/connect-auth/v1/account/refresh"

// TestClientMatrix runs every flow of the API with every independent JOSE
// client, in both serializations, with both kinds of key (A128CBC-HS256,
// and A256GCM with iat and jti in every request's protected header),
// through the real binaries: login, a webhook registration and its
// listing, an upload, a retrieve, and a refresh on the main route and on
// the first version's route. Each request is encrypted, and each answer
// decrypted, by the client alone.
func TestClientMatrix(t *testing.T) {
	s := startStack(t)
	for _, enc := range []string{"", encGCM} {
		for _, jc := range joseClients {
			for _, form := range []string{formJSON, formCompact} {
				v := sealedBy{jc, form}
				t.Run(cmp.Or(enc, "A128CBC-HS256")+", "+v.String(), func(t *testing.T) {
					s.t = t
					s.clientFlow(v, enc)
				})
			}
		}
	}
}

// clientFlow runs the flows of the matrix as a new client with a key of
// enc, every request sealed by v.
func (s *stack) clientFlow(v sealedBy, enc string) {
	t := s.t
	c := s.newClientEnc("matrix-"+strings.NewReplacer(" ", "-", ",", "").Replace(v.String())+enc, enc)
	login, _ := json.Marshal(map[string]string{"client_id": c.ID, "client_secret": c.Secret})
	tk := s.tokens("login", s.sendSealed(v, c, "POST", loginPath, login, nil))

	endpoint := "https://hooks.example.org/" + url.PathEscape(c.ID)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(testkit.RandomBytes(32))
	sub := s.sendSealed(v, c, "POST", subsPath, []byte(`{"endpoint":"`+endpoint+`","event_names":["user.delete"],"signing_key":"`+secret+`"}`), bearer(tk))
	if sub.status != 200 || sub.json(t)["status"] != "success" {
		t.Fatalf("register: %s", sub)
	}
	if list := s.sendSealed(v, c, "GET", subsPath, nil, bearer(tk)); list.status != 200 || !bytes.Contains(list.body, []byte(endpoint)) {
		t.Fatalf("list: %s", list)
	}

	file := testkit.RandomBytes(3000)
	up := s.sendSealed(v, c, "POST", uploadPath, jsonUpload(file), bearer(tk))
	id, _ := up.json(t)["care_context_id"].(string)
	if up.status != 200 || id == "" {
		t.Fatalf("upload: %s", up)
	}
	checkRecord(t, s.sendSealed(v, c, "GET", retrievePath+"?identifier="+url.QueryEscape(id), nil, bearer(tk)), file)

	// Refresh on the main route, then as a client of the first version
	// does: an empty bearer, a lower-case client-id, the expired pair.
	body, _ := json.Marshal(map[string]string{"refresh_token": tk.RefreshToken, "access_token": tk.AccessToken})
	next := s.tokens("refresh", s.sendSealed(v, c, "POST", refreshPath, body, map[string]string{authorization: "Bearer " + tk.AccessToken, "Client-Id": c.ID}))
	body, _ = json.Marshal(map[string]string{"refresh_token": next.RefreshToken, "access_token": next.AccessToken})
	third := s.tokens("compatibility refresh", s.sendSealed(v, c, "POST", refreshCompatPath, body, map[string]string{authorization: "Bearer ", "client-id": c.ID}))
	if third.RefreshToken == next.RefreshToken || next.RefreshToken == tk.RefreshToken {
		t.Fatal("a refresh did not rotate the refresh token")
	}
	// The new access token works.
	if r := s.sendSealed(v, c, "GET", subsPath, nil, bearer(third)); r.status != 200 {
		t.Fatalf("list with the refreshed token: %s", r)
	}
}

// tokens reads a token pair from a successful answer.
func (s *stack) tokens(what string, r *response) tokens {
	s.t.Helper()
	var tk tokens
	if r.status != 200 || json.Unmarshal(r.body, &tk) != nil || tk.AccessToken == "" || tk.RefreshToken == "" {
		s.t.Fatalf("%s: %s", what, r)
	}
	return tk
}

// TestJWXDefaultJSONRefusedClearly: jwx's JSON serialization by default
// repeats alg in a per-recipient header, which RFC 7516 §7.2.1 forbids;
// the refusal names the parameter and the rule, so that a user finds the
// setting (WithLegacyHeaderMerging(false)).
func TestJWXDefaultJSONRefusedClearly(t *testing.T) {
	s := startStack(t)
	c := s.newClient("jwx-default")
	login, _ := json.Marshal(map[string]string{"client_id": c.ID, "client_secret": c.Secret})
	env := jwx.encrypt(t, c, "json-default", login)
	r := s.do("POST", loginPath, env, map[string]string{jweHeader: "JWE", "Content-Type": jsonType})
	expectProblem(t, r, 400, "invalid_envelope")
	if detail, _ := r.json(t)["detail"].(string); !strings.Contains(detail, `"alg"`) || !strings.Contains(detail, "7.2.1") {
		t.Fatalf("the refusal does not name the parameter and the rule: %q", detail)
	}
}

// TestRefreshCompatThroughTheEdge: on the first version's refresh route
// the refresh token is the credential; a key or Client-Id of another
// client is refused; a token rotated on either route is reuse on the other.
func TestRefreshCompatThroughTheEdge(t *testing.T) {
	s := startStack(t)
	a, b := s.newClient("compat-a"), s.newClient("compat-b")
	tk := s.login(a, false, "")
	body := func(tk tokens) []byte {
		out, _ := json.Marshal(map[string]string{"refresh_token": tk.RefreshToken})
		return out
	}
	// Plain, with nothing but the body.
	next := s.tokens("plain compatibility refresh", s.send(a, false, "POST", refreshCompatPath, body(tk), nil))
	// Another client's key, or its Client-Id, is not the token's client:
	// refused without consuming the token.
	expectProblem(t, s.send(b, true, "POST", refreshCompatPath, body(next), nil), 401, "invalid_refresh_token")
	expectProblem(t, s.send(a, false, "POST", refreshCompatPath, body(next), map[string]string{"Client-Id": b.ID}), 401, "invalid_refresh_token")
	expectProblem(t, s.send(a, true, "POST", refreshCompatPath, body(next), map[string]string{"Client-Id": b.ID}), 401, "client_mismatch")
	third := s.tokens("encrypted compatibility refresh", s.send(a, true, "POST", refreshCompatPath, body(next), nil))
	// next was rotated here: on the main route it is reuse, which revokes
	// the login, so third dies too.
	h := bearer(third)
	h["Client-Id"] = a.ID
	expectProblem(t, s.send(a, true, "POST", refreshPath, body(next), h), 401, "invalid_refresh_token")
	expectProblem(t, s.send(a, true, "POST", refreshCompatPath, body(third), nil), 401, "invalid_refresh_token")
}
