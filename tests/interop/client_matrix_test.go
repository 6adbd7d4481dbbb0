package interop

import (
	"cmp"
	"encoding/json"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestClientMatrix runs every flow of the API with every independent JOSE
// client, in both serializations (jwx v2 in the compact one alone, see
// docs/clients.md), with both kinds of key as hdc keys add printed them (A128CBC-HS256,
// and A256GCM with iat and jti in every request's protected header),
// through the real binaries: login, a webhook registration and its
// listing, an upload, a retrieve, and a refresh on the main route and on
// the first version's route. Each request is encrypted, and each answer
// decrypted, by the client alone.
func TestClientMatrix(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	for _, enc := range []string{"", hdctest.EncGCM} {
		for _, jc := range hdctest.JoseClients {
			for _, form := range jc.Forms() {
				v := hdctest.SealedBy{Client: jc, Form: form}
				t.Run(cmp.Or(enc, "A128CBC-HS256")+", "+v.String(), func(t *testing.T) {
					t.Parallel()
					s.For(t).ClientFlow(v, enc)
				})
			}
		}
	}
}

// TestJWXDefaultJSONRefusedClearly: jwx's JSON serialization by default
// repeats alg in a per-recipient header, which RFC 7516 §7.2.1 forbids;
// the refusal names the parameter and the rule, so that a user finds the
// setting (WithLegacyHeaderMerging(false)).
func TestJWXDefaultJSONRefusedClearly(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("jwx-default")
	login, _ := json.Marshal(map[string]string{"client_id": c.ID, "client_secret": c.Secret})
	env := hdctest.JWX.Encrypt(t, c, "json-default", login)
	r := s.Do("POST", hdctest.LoginPath, env, map[string]string{hdctest.JWEHeader: "JWE", "Content-Type": hdctest.JSONType})
	hdctest.ExpectProblem(t, r, 400, "invalid_envelope")
	if detail, _ := r.JSON(t)["detail"].(string); !strings.Contains(detail, `"alg"`) || !strings.Contains(detail, "7.2.1") {
		t.Fatalf("the refusal does not name the parameter and the rule: %q", detail)
	}
}

// TestRefreshCompatThroughTheEdge: on the first version's refresh route
// the refresh token is the credential; a key or Client-Id of another
// client is refused; a token rotated on either route is reuse on the other.
func TestRefreshCompatThroughTheEdge(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	a, b := s.NewClient("compat-a"), s.NewClient("compat-b")
	tk := s.Login(a, false, "")
	body := func(tk hdctest.Tokens) []byte {
		out, _ := json.Marshal(map[string]string{"refresh_token": tk.RefreshToken})
		return out
	}
	// Plain, with nothing but the body.
	next := s.Tokens("plain compatibility refresh", s.Send(a, false, "POST", hdctest.RefreshCompatPath, body(tk), nil))
	// Another client's key, or its Client-Id, is not the token's client:
	// refused without consuming the token.
	hdctest.ExpectProblem(t, s.Send(b, true, "POST", hdctest.RefreshCompatPath, body(next), nil), 401, "invalid_refresh_token")
	hdctest.ExpectProblem(t, s.Send(a, false, "POST", hdctest.RefreshCompatPath, body(next), map[string]string{"Client-Id": b.ID}), 401, "invalid_refresh_token")
	hdctest.ExpectProblem(t, s.Send(a, true, "POST", hdctest.RefreshCompatPath, body(next), map[string]string{"Client-Id": b.ID}), 401, "client_mismatch")
	third := s.Tokens("encrypted compatibility refresh", s.Send(a, true, "POST", hdctest.RefreshCompatPath, body(next), nil))
	// next was rotated here: on the main route it is reuse, which revokes
	// the login, so third dies too.
	h := hdctest.Bearer(third)
	h["Client-Id"] = a.ID
	hdctest.ExpectProblem(t, s.Send(a, true, "POST", hdctest.RefreshPath, body(next), h), 401, "invalid_refresh_token")
	hdctest.ExpectProblem(t, s.Send(a, true, "POST", hdctest.RefreshCompatPath, body(third), nil), 401, "invalid_refresh_token")
}
