package caddymodule

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

const subscriptions = "/notification/v1/connect/webhook/subscriptions"

// call sends one request to the edge and returns the response with its body.
func (e *liveEdge) call(t testing.TB, method, path string, body []byte, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		req.Body, req.ContentLength = nil, 0
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

var (
	b64url = base64.RawURLEncoding
	b64std = base64.StdEncoding
)

// listedKey is a key as the admin API lists it.
type listedKey struct {
	clientkey.Listed
	LastUsed *time.Time `json:"last_used"`
}

func encHeaders(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token, "X-Encryption": "JWE", "Content-Type": "application/json"}
}

// decryptResponse opens a response envelope with the shared key of kid.
func decryptResponse(t testing.TB, resp *http.Response, body []byte, kid string) map[string]any {
	t.Helper()
	e, ct := edgetest.ParseAnswer(t, resp.Header, body)
	pt, err := e.Decrypt(edgetest.Key(t, edgetest.SecretOf(kid)), ct)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(pt, &m); err != nil {
		t.Fatalf("decrypted response is not JSON: %q", pt)
	}
	return m
}

func TestEdgeRoundTrips(t *testing.T) {
	e := startEdge(t, edgetest.Keys, nil)
	c1 := e.token("c1", nil)
	payload := []byte(`{"endpoint":"https://example.org/hook","event_names":["appointment.created"]}`)
	k := edgetest.Key(t, edgetest.SecretOf("k-c1"))

	t.Run("flattened", func(t *testing.T) {
		resp, body := e.call(t, "POST", subscriptions, jwe.EncryptRequest(k, jwe.Protected{Kid: "k-c1"}, payload), encHeaders(c1))
		got := decryptResponse(t, resp, body, "k-c1")
		hit := e.up.last()
		if hit.sha256 != hexSHA(payload) || hit.contentLength != int64(len(payload)) ||
			hit.header.Get("Content-Length") != strconv.Itoa(len(payload)) || len(hit.te) != 0 {
			t.Fatalf("upstream got %d bytes (len field %d, header %q, te %v)", hit.size, hit.contentLength, hit.header.Get("Content-Length"), hit.te)
		}
		for name, want := range map[string]string{"X-Hdc-Client-Id": "c1", "X-Hdc-Workspace-Id": "ws-c1",
			"X-Hdc-Token-Id": "jti-c1", "X-Hdc-Key-Id": "k-c1", "X-Hdc-Grant-Id": "", "X-Encryption": "", "Content-Type": "application/json"} {
			if hit.header.Get(name) != want {
				t.Fatalf("upstream header %s = %q, want %q", name, hit.header.Get(name), want)
			}
		}
		if got["client"] != "c1" || got["kid"] != "k-c1" {
			t.Fatalf("decrypted response %v", got)
		}
	})
	t.Run("compact", func(t *testing.T) {
		h := encHeaders(c1)
		h["Content-Type"] = "application/jose"
		resp, body := e.call(t, "POST", subscriptions, jwe.EncryptCompact(k, jwe.Protected{Kid: "k-c1"}, payload), h)
		decryptResponse(t, resp, body, "k-c1")
		if e.up.last().sha256 != hexSHA(payload) {
			t.Fatal("upstream did not get the plaintext")
		}
	})
	t.Run("retrieve asks for an encrypted response", func(t *testing.T) {
		resp, body := e.call(t, "GET", "/health/api/v1/fhir/retrieve?identifier=cc1", nil, map[string]string{
			"Authorization": "Bearer " + c1, "X-Encryption": "JWE", "X-Encryption-Kid": "k-c1"})
		if got := decryptResponse(t, resp, body, "k-c1"); got["path"] != "/health/api/v1/fhir/retrieve" {
			t.Fatalf("decrypted %v", got)
		}
	})
	t.Run("plain requests pass untouched, injected identity replaced", func(t *testing.T) {
		resp, body := e.call(t, "POST", subscriptions, payload, map[string]string{
			"Authorization": "Bearer " + c1, "Content-Type": "application/json",
			"X-HDC-Client-Id": "c2", "X-Hdc-Workspace-Id": "ws-c2", "X-HDC-Key-Id": "k-c2", "X-Hdc-Edge-Secret": "guess"})
		if resp.StatusCode != 200 || resp.Header.Get("X-Encryption") != "" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		hit := e.up.last()
		if hit.header.Get(contract.HeaderClientID) != "c1" || hit.header.Get(contract.HeaderWorkspaceID) != "ws-c1" ||
			hit.header.Get(contract.HeaderKeyID) != "" || hit.sha256 != hexSHA(payload) {
			t.Fatalf("upstream saw %v", hit.header)
		}
		if got := hit.header.Get("X-Hdc-Edge-Secret"); got == "guess" {
			t.Fatal("a client-sent X-HDC-* header reached the upstream")
		}
	})
	t.Run("only the headers the backend reads are forwarded", func(t *testing.T) {
		sent := map[string]string{"Authorization": "Bearer " + c1, "Content-Type": "application/json",
			"X-Api-Key": "hdc_cs_planted", "Cookie": "session=1", "Accept": "*/*", "User-Agent": "probe/1",
			"Origin": "https://example.org", "X-Forwarded-For": "192.0.2.1", "Forwarded": "for=192.0.2.1",
			"Connection": "keep-alive, X-Custom", "X-Custom": "1"}
		for _, path := range []string{subscriptions, "/connect-auth/v1/account/refresh-token"} {
			h := maps.Clone(sent)
			if path != subscriptions {
				h["Client-Id"] = "c1"
			}
			resp, body := e.call(t, "POST", path, payload, h)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
			}
			for name := range e.up.last().header {
				// The transport's own: the length of the body, and the
				// compression it accepts.
				if !contract.Forwards(path, name) && name != "Content-Length" && name != "Accept-Encoding" {
					t.Errorf("%s: the upstream got %s", path, name)
				}
			}
		}
		if e.up.last().header.Get("Authorization") == "" {
			t.Error("the refresh route did not get the bearer token it compares with the body")
		}
	})
	t.Run("a token's grant is forwarded, a client's is not", func(t *testing.T) {
		shared := e.token("c1", map[string]any{"ws": "ws-c2", "grant": "g-1"})
		for _, tc := range []struct{ token, sent, want string }{{shared, "", "g-1"}, {c1, "g-2", ""}, {shared, "g-2", "g-1"}} {
			resp, body := e.call(t, "GET", subscriptions, nil, map[string]string{"Authorization": "Bearer " + tc.token, "X-Hdc-Grant-Id": tc.sent})
			if got := e.up.last().header.Values(contract.HeaderGrantID); resp.StatusCode != 200 || strings.Join(got, ",") != tc.want {
				t.Fatalf("%d %s: upstream grant %q, want %q", resp.StatusCode, body, got, tc.want)
			}
		}
	})
	t.Run("a token's login is forwarded, a client's is not", func(t *testing.T) {
		named := e.token("c1", map[string]any{"sid": "login-1"})
		for _, tc := range []struct{ token, sent, want string }{{named, "", "login-1"}, {c1, "login-2", ""}, {named, "login-2", "login-1"}} {
			resp, body := e.call(t, "GET", subscriptions, nil, map[string]string{"Authorization": "Bearer " + tc.token, "X-Hdc-Session-Id": tc.sent})
			if got := e.up.last().header.Values(contract.HeaderSessionID); resp.StatusCode != 200 || strings.Join(got, ",") != tc.want {
				t.Fatalf("%d %s: upstream session %q, want %q", resp.StatusCode, body, got, tc.want)
			}
		}
	})
	t.Run("encrypted login", func(t *testing.T) {
		login := []byte(`{"client_id":"c1","client_secret":"s3cret"}`)
		resp, body := e.call(t, "POST", "/connect-auth/v1/account/login", jwe.EncryptRequest(k, jwe.Protected{Kid: "k-c1"}, login),
			map[string]string{"X-Encryption": "JWE", "Content-Type": "application/json"})
		decryptResponse(t, resp, body, "k-c1")
		if e.up.last().sha256 != hexSHA(login) {
			t.Fatal("upstream did not get the login plaintext")
		}
	})
	t.Run("refresh with an expired token", func(t *testing.T) {
		expired := e.token("c1", map[string]any{"exp": time.Now().Add(-time.Hour).Unix(), "nbf": time.Now().Add(-2 * time.Hour).Unix(), "iat": time.Now().Add(-2 * time.Hour).Unix()})
		resp, body := e.call(t, "POST", "/connect-auth/v1/account/refresh-token", []byte(`{"refresh_token":"r"}`),
			map[string]string{"Authorization": "Bearer " + expired, "Client-Id": "c1", "Content-Type": "application/json"})
		if resp.StatusCode != 200 || e.up.last().header.Get(contract.HeaderClientID) != "c1" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		// The same expired token is refused everywhere else.
		resp, _ = e.call(t, "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, map[string]string{"Authorization": "Bearer " + expired})
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("expired token on retrieve: %d", resp.StatusCode)
		}
	})
}

func hexSHA(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestEdgeHostile sends malformed and hostile requests through the real
// edge: each must get a 4xx problem+json, never a 5xx, and never reach the
// upstream. Tag failure, padding failure and unknown kid answer alike, byte
// for byte.
func TestEdgeHostile(t *testing.T) {
	e := startEdge(t, edgetest.Keys, nil)
	c1 := e.token("c1", nil)
	k1 := edgetest.Key(t, edgetest.SecretOf("k-c1"))
	plain := []byte(`{"endpoint":"https://example.org/hook"}`)
	good := jwe.EncryptRequest(k1, jwe.Protected{Kid: "k-c1"}, plain)
	var m map[string]string
	if err := json.Unmarshal(good, &m); err != nil {
		t.Fatal(err)
	}
	member := func(name, v string) string { return fmt.Sprintf("%q:%q", name, v) }
	env := func(members ...string) []byte { return []byte("{" + strings.Join(members, ",") + "}") }
	prot, iv, ct, tag, kid := member("protected", m["protected"]), member("iv", m["iv"]), member("ciphertext", m["ciphertext"]), member("tag", m["tag"]), member("kid", "k-c1")
	hdr := func(h string) string { return member("protected", b64url.EncodeToString([]byte(h))) }
	with := func(name, value string) []byte {
		c := map[string]string{}
		for k, v := range m {
			c[k] = v
		}
		c[name] = value
		out, _ := json.Marshal(c)
		return out
	}
	compact := func(parts ...string) []byte { return []byte(strings.Join(parts, ".")) }
	_, forgedPriv, _ := ed25519.GenerateKey(rand.Reader)
	forged := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"iss": "health-data-connect", "aud": "health-data-connect-api",
			"sub": "c1", "ws": "ws-c1", "jti": "j", "exp": time.Now().Add(time.Hour).Unix()})
		tok.Header["kid"] = "sig-1"
		s, _ := tok.SignedString(forgedPriv)
		return s
	}()
	noneToken := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": "health-data-connect", "aud": "health-data-connect-api",
			"sub": "c1", "ws": "ws-c1", "jti": "j", "exp": time.Now().Add(time.Hour).Unix()})
		tok.Header["kid"] = "sig-1"
		s, _ := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		return s
	}()
	hsToken := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": "health-data-connect", "aud": "health-data-connect-api",
			"sub": "c1", "ws": "ws-c1", "jti": "j", "exp": time.Now().Add(time.Hour).Unix()})
		tok.Header["kid"] = "sig-1"
		s, _ := tok.SignedString([]byte(e.signer.Pub))
		return s
	}()
	auth := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	enc := encHeaders(c1)
	jose := encHeaders(c1)
	jose["Content-Type"] = "application/jose"

	tests := []struct {
		name   string
		method string
		path   string
		body   []byte
		header map[string]string
		status int
		code   string
	}{
		{"bad JSON", "POST", subscriptions, []byte(`{"protected":`), enc, 400, "invalid_envelope"},
		{"not an object", "POST", subscriptions, []byte(`[]`), enc, 400, "invalid_envelope"},
		{"duplicate iv", "POST", subscriptions, env(prot, iv, iv, ct, tag, kid), enc, 400, "invalid_envelope"},
		{"duplicate via escape", "POST", subscriptions, env(prot, iv, ct, tag, kid, `"\u0074ag":"`+m["tag"]+`"`), enc, 400, "invalid_envelope"},
		{"padded iv", "POST", subscriptions, with("iv", m["iv"]+"=="), enc, 400, "invalid_envelope"},
		{"standard base64 alphabet", "POST", subscriptions, with("ciphertext", "+/"+m["ciphertext"][2:]), enc, 400, "invalid_envelope"},
		{"short iv", "POST", subscriptions, with("iv", b64url.EncodeToString(make([]byte, 12))), enc, 400, "invalid_envelope"},
		{"short tag", "POST", subscriptions, with("tag", b64url.EncodeToString(make([]byte, 8))), enc, 400, "invalid_envelope"},
		{"long tag", "POST", subscriptions, with("tag", b64url.EncodeToString(make([]byte, 32))), enc, 400, "invalid_envelope"},
		{"alg A128KW", "POST", subscriptions, env(hdr(`{"alg":"A128KW","enc":"A128CBC-HS256"}`), iv, ct, tag, kid), enc, 400, "invalid_envelope"},
		{"alg none", "POST", subscriptions, env(hdr(`{"alg":"none","enc":"A128CBC-HS256"}`), iv, ct, tag, kid), enc, 400, "invalid_envelope"},
		{"enc A256GCM", "POST", subscriptions, env(hdr(`{"alg":"dir","enc":"A256GCM"}`), iv, ct, tag, kid), enc, 400, "invalid_envelope"},
		{"zip", "POST", subscriptions, env(hdr(`{"alg":"dir","enc":"A128CBC-HS256","zip":"DEF"}`), iv, ct, tag, kid), enc, 400, "invalid_envelope"},
		{"crit", "POST", subscriptions, env(hdr(`{"alg":"dir","enc":"A128CBC-HS256","crit":["x"]}`), iv, ct, tag, kid), enc, 400, "invalid_envelope"},
		{"unknown header parameter", "POST", subscriptions, env(hdr(`{"alg":"dir","enc":"A128CBC-HS256","jku":"https://evil"}`), iv, ct, tag, kid), enc, 400, "invalid_envelope"},
		{"unknown member", "POST", subscriptions, env(prot, iv, ct, tag, kid, `"extra":1`), enc, 400, "invalid_envelope"},
		{"aad member", "POST", subscriptions, env(prot, iv, ct, tag, kid, member("aad", "eA")), enc, 400, "invalid_envelope"},
		{"missing protected", "POST", subscriptions, env(iv, ct, tag, kid), enc, 400, "invalid_envelope"},
		{"missing kid", "POST", subscriptions, env(hdr(`{"alg":"dir","enc":"A128CBC-HS256"}`), iv, ct, tag), enc, 400, "invalid_envelope"},
		{"kid disagrees with header", "POST", subscriptions, env(hdr(`{"alg":"dir","enc":"A128CBC-HS256","kid":"k-c2"}`), iv, ct, tag, kid), enc, 400, "invalid_envelope"},
		{"control character in kid", "POST", subscriptions, env(prot, iv, ct, tag, "\"kid\":\"k\x01\""), enc, 400, "invalid_envelope"},
		{"trailing data", "POST", subscriptions, append(bytes.Clone(good), []byte(`{}`)...), enc, 400, "invalid_envelope"},
		{"deep nesting", "POST", subscriptions, env(prot, iv, ct, tag, kid, `"unprotected":`+strings.Repeat(`{"a":`, 10000)), enc, 400, "invalid_envelope"},
		{"truncated ciphertext", "POST", subscriptions, with("ciphertext", b64url.EncodeToString(make([]byte, 31))), enc, 400, "invalid_envelope"},
		{"empty ciphertext", "POST", subscriptions, with("ciphertext", ""), enc, 400, "invalid_envelope"},
		{"compact, four parts", "POST", subscriptions, compact(m["protected"], "", m["iv"], m["ciphertext"]), jose, 400, "invalid_envelope"},
		{"compact, six parts", "POST", subscriptions, compact(m["protected"], "", m["iv"], m["ciphertext"], m["tag"], "x"), jose, 400, "invalid_envelope"},
		{"compact, encrypted key", "POST", subscriptions, compact(m["protected"], "AAAA", m["iv"], m["ciphertext"], m["tag"]), jose, 400, "invalid_envelope"},
		{"compact without kid", "POST", subscriptions, compact(b64url.EncodeToString([]byte(`{"alg":"dir","enc":"A128CBC-HS256"}`)), "", m["iv"], m["ciphertext"], m["tag"]), jose, 400, "invalid_envelope"},
		{"oversized body", "POST", subscriptions, with("ciphertext", strings.Repeat("A", 400<<10)), enc, 413, "payload_too_large"},
		{"text/plain body", "POST", subscriptions, good, map[string]string{"Authorization": "Bearer " + c1, "X-Encryption": "JWE", "Content-Type": "text/plain"}, 415, "unsupported_media_type"},
		{"body-less without X-Encryption-Kid", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, map[string]string{"Authorization": "Bearer " + c1, "X-Encryption": "JWE"}, 400, "invalid_envelope"},
		{"flipped tag", "POST", subscriptions, with("tag", edgetest.FlipB64(t, m["tag"])), enc, 400, "invalid_encryption"},
		{"bad padding", "POST", subscriptions, edgetest.RawEnvelope(t, edgetest.SecretOf("k-c1"), "k-c1", make([]byte, 32)), enc, 400, "invalid_encryption"},
		{"unknown kid", "POST", subscriptions, jwe.EncryptRequest(edgetest.Key(t, "zzzzzzzzzzzzzzzz"), jwe.Protected{Kid: "k-nobody"}, plain), enc, 400, "invalid_encryption"},
		{"flipped ciphertext", "POST", subscriptions, with("ciphertext", edgetest.FlipB64(t, m["ciphertext"])), enc, 400, "invalid_encryption"},
		{"flipped iv", "POST", subscriptions, with("iv", edgetest.FlipB64(t, m["iv"])), enc, 400, "invalid_encryption"},
		{"another client's kid", "POST", subscriptions, jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c2")), jwe.Protected{Kid: "k-c2"}, plain), enc, 400, "invalid_encryption"},
		{"retired kid", "POST", subscriptions, jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c1-dead")), jwe.Protected{Kid: "k-c1-dead"}, plain), enc, 400, "invalid_encryption"},
		{"foreign kid for the response", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, map[string]string{"Authorization": "Bearer " + c1, "X-Encryption": "JWE", "X-Encryption-Kid": "k-c2"}, 400, "invalid_encryption"},
		{"login with another client's kid", "POST", "/connect-auth/v1/account/login", jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c2")), jwe.Protected{Kid: "k-c2"}, []byte(`{"client_id":"c1","client_secret":"x"}`)), map[string]string{"X-Encryption": "JWE", "Content-Type": "application/json"}, 400, "invalid_encryption"},
		{"login with an unknown kid", "POST", "/connect-auth/v1/account/login", jwe.EncryptRequest(edgetest.Key(t, "zzzzzzzzzzzzzzzz"), jwe.Protected{Kid: "nobody"}, []byte(`{"client_id":"c1"}`)), map[string]string{"X-Encryption": "JWE", "Content-Type": "application/json"}, 400, "invalid_encryption"},
		{"no token", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, nil, 401, "missing_token"},
		{"basic auth", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, map[string]string{"Authorization": "Basic YTpi"}, 401, "invalid_token"},
		{"expired token", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, auth(e.token("c1", map[string]any{"exp": time.Now().Add(-10 * time.Minute).Unix()})), 401, "token_expired"},
		{"forged token", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, auth(forged), 401, "invalid_token"},
		{"alg none token", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, auth(noneToken), 401, "invalid_token"},
		{"HS256 with the public key", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, auth(hsToken), 401, "invalid_token"},
		{"wrong audience", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, auth(e.token("c1", map[string]any{"aud": "someone-else"})), 401, "invalid_token"},
		{"wrong issuer", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, auth(e.token("c1", map[string]any{"iss": "https://evil"})), 401, "invalid_token"},
		{"not yet valid", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, auth(e.token("c1", map[string]any{"nbf": time.Now().Add(time.Hour).Unix()})), 401, "invalid_token"},
		{"no workspace claim", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, auth(e.token("c1", map[string]any{"ws": nil})), 401, "invalid_token"},
		{"tampered payload", "GET", "/health/api/v1/fhir/retrieve?identifier=x", nil, auth(tamperJWT(e.token("c1", nil))), 401, "invalid_token"},
		{"injected identity, no token", "POST", subscriptions, plain, map[string]string{"X-HDC-Client-Id": "c1", "X-HDC-Workspace-Id": "ws-c1", "Content-Type": "application/json"}, 401, "missing_token"},
		{"refresh, Client-Id mismatch", "POST", "/connect-auth/v1/account/refresh-token", []byte(`{}`), map[string]string{"Authorization": "Bearer " + c1, "Client-Id": "c2"}, 401, "client_mismatch"},
		{"refresh, no Client-Id", "POST", "/connect-auth/v1/account/refresh-token", []byte(`{}`), auth(c1), 400, "missing_client_id"},
		{"refresh, forged token", "POST", "/connect-auth/v1/account/refresh-token", []byte(`{}`), map[string]string{"Authorization": "Bearer " + forged, "Client-Id": "c1"}, 401, "invalid_token"},
		{"unknown route", "GET", "/admin", nil, nil, 404, "not_found"},
	}
	uniform := map[string][]byte{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.up.count()
			resp, body := e.call(t, tt.method, tt.path, tt.body, tt.header)
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("got %d %s %s, want %d problem+json", resp.StatusCode, resp.Header.Get("Content-Type"), body, tt.status)
			}
			var p struct {
				Code   string `json:"code"`
				Status int    `json:"status"`
				Type   string `json:"type"`
				Title  string `json:"title"`
			}
			if err := json.Unmarshal(body, &p); err != nil || p.Code != tt.code || p.Status != tt.status || p.Type == "" || p.Title == "" {
				t.Fatalf("problem %s, want code %s", body, tt.code)
			}
			if tt.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("401 without a Bearer challenge: %q", resp.Header.Get("WWW-Authenticate"))
			}
			if e.up.count() != before {
				t.Fatal("the request reached the upstream")
			}
			if tt.code == "invalid_encryption" {
				uniform[tt.name] = canonicalResponse(resp, body)
			}
		})
	}
	if len(tests) < 40 {
		t.Fatalf("only %d hostile cases", len(tests))
	}
	want := uniform["flipped tag"]
	for _, name := range []string{"bad padding", "unknown kid", "flipped ciphertext", "another client's kid", "retired kid"} {
		if !bytes.Equal(uniform[name], want) {
			t.Fatalf("%q answered differently from a bad tag:\n%s\n---\n%s", name, uniform[name], want)
		}
	}
}

// canonicalResponse is a response's status, headers (but Date and the
// request's random id, which say nothing of the failure) and body.
func canonicalResponse(resp *http.Response, body []byte) []byte {
	h := resp.Header.Clone()
	h.Del("Date")
	h.Del(contract.HeaderRequestIDAnswer)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n", resp.StatusCode)
	_ = h.Write(&b)
	b.Write(body)
	return b.Bytes()
}

// tamperJWT changes the subject of a token without re-signing it.
func tamperJWT(tok string) string {
	parts := strings.Split(tok, ".")
	payload, _ := b64url.DecodeString(parts[1])
	payload = bytes.Replace(payload, []byte(`"sub":"c1"`), []byte(`"sub":"c2"`), 1)
	parts[1] = b64url.EncodeToString(payload)
	return strings.Join(parts, ".")
}

// TestEdgeRotation rotates c1's key while clients keep sending: those that
// have the old key keep using it (retiring), those told the new one switch
// at once. No request may fail.
func TestEdgeRotation(t *testing.T) {
	e := startEdge(t, edgetest.Keys, nil)
	c1 := e.token("c1", nil)
	type current struct{ kid, secret string }
	var cur atomic.Pointer[current]
	cur.Store(&current{"k-c1", edgetest.SecretOf("k-c1")})
	var sent, failed atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				use := cur.Load()
				if w%2 == 0 { // half the clients never hear of the new key
					use = &current{"k-c1", edgetest.SecretOf("k-c1")}
				}
				body := []byte(fmt.Sprintf(`{"worker":%d,"i":%d}`, w, i))
				resp, out := e.call(t, "POST", subscriptions, jwe.EncryptRequest(edgetest.Key(t, use.secret), jwe.Protected{Kid: use.kid}, body), encHeaders(c1))
				sent.Add(1)
				if resp.StatusCode != 200 {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%s: %d %s", use.kid, resp.StatusCode, out))
					continue
				}
				env, ct, err := jwe.Parse(out, jwe.Flattened)
				if err == nil {
					_, err = env.Decrypt(edgetest.Key(t, use.secret), ct)
				}
				if err != nil {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, "response: "+err.Error())
				}
			}
		}()
	}
	// Each phase, the old key alone and then both, lasts until 10 more
	// requests have their answers.
	testkit.Grows(t, &sent, 10, "10 requests before the rotation")
	var rotated registryfile.Entry
	if err := registryfile.Update(e.registry, edgetest.Sealer, func(f *registryfile.File) (err error) {
		rotated, _, err = f.Rotate("c1", "", nil, false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cur.Store(&current{rotated.Kid, rotated.Secret}) // handed to the client straight away
	testkit.Grows(t, &sent, 10, "10 requests after the rotation")
	close(stop)
	wg.Wait()
	if sent.Load() < 20 {
		t.Fatalf("only %d requests sent", sent.Load())
	}
	if failed.Load() != 0 {
		t.Fatalf("%d of %d requests failed during rotation; first: %v", failed.Load(), sent.Load(), firstFailure.Load())
	}
	t.Logf("%d requests during rotation, none failed", sent.Load())
}

// TestEdgeLargeUpload sends a 64 MiB file encrypted (about 114 MB of
// envelope): it must reach the upstream intact, as a stream from a spooled
// ciphertext.
func TestEdgeLargeUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("large upload")
	}
	e := startEdge(t, edgetest.Keys, map[string]string{"HDC_UPLOAD_MAX_BODY": "200MiB"})
	file := make([]byte, 64<<20)
	_, _ = rand.Read(file)
	plaintext := make([]byte, 0, len(file)*4/3+16)
	plaintext = append(plaintext, `{"file":"`...)
	plaintext = b64std.AppendEncode(plaintext, file)
	plaintext = append(plaintext, `"}`...)
	envelope := jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c1")), jwe.Protected{Kid: "k-c1"}, plaintext)
	t.Logf("file %d bytes, plaintext %d, envelope %d", len(file), len(plaintext), len(envelope))
	resp, body := e.call(t, "POST", "/mr/api/v2/docs", envelope, encHeaders(e.token("c1", nil)))
	got := decryptResponse(t, resp, body, "k-c1")
	if got["sha256"] != hexSHA(plaintext) || got["bytes"] != float64(len(plaintext)) {
		t.Fatalf("upstream got %v bytes with sha256 %v", got["bytes"], got["sha256"])
	}
	if hit := e.up.last(); hit.contentLength != int64(len(plaintext)) {
		t.Fatalf("upstream Content-Length %d", hit.contentLength)
	}
}

// TestEdgeAdminAndMetrics: the admin API lists kids without secrets, with
// their last use, and reloads the registry on demand; the metrics count
// requests by kid and result.
func TestEdgeAdminAndMetrics(t *testing.T) {
	e := startEdge(t, edgetest.Keys, nil)
	c1 := e.token("c1", nil)
	resp, _ := e.call(t, "POST", subscriptions, jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c1")), jwe.Protected{Kid: "k-c1"}, []byte(`{}`)), encHeaders(c1))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	e.call(t, "POST", subscriptions, jwe.EncryptRequest(edgetest.Key(t, "zzzzzzzzzzzzzzzz"), jwe.Protected{Kid: "k-c2"}, []byte(`{}`)), encHeaders(c1))

	get := func(path string) (int, []byte) {
		resp, err := e.client.Get(e.admin + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	status, body := get("/hdc/keys")
	if status != 200 {
		t.Fatalf("GET /hdc/keys: %d %s", status, body)
	}
	for _, k := range edgetest.Keys {
		if bytes.Contains(body, []byte(k.Secret)) {
			t.Fatal("the admin API shows a secret")
		}
	}
	var keys []listedKey
	if err := json.Unmarshal(body, &keys); err != nil || len(keys) != len(edgetest.Keys) {
		t.Fatalf("keys %s", body)
	}
	for _, k := range keys {
		if used := k.LastUsed != nil; used != (k.Kid == "k-c1") {
			t.Fatalf("%s last_used = %v", k.Kid, k.LastUsed)
		}
	}

	// A key added to the file shows up after a forced reload.
	if err := registryfile.Update(e.registry, edgetest.Sealer, func(f *registryfile.File) error {
		_, err := f.Add("c3", "k-c3", "", "", false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	resp2, err := e.client.Post(e.admin+"/hdc/keys/reload", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	reload, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if resp2.StatusCode != 200 || !bytes.Contains(reload, []byte(`"keys":5`)) {
		t.Fatalf("reload: %d %s", resp2.StatusCode, reload)
	}
	if status, _ := get("/hdc/keys/reload"); status != http.StatusMethodNotAllowed {
		t.Fatalf("GET reload: %d", status)
	}

	status, metrics := get("/metrics")
	if status != 200 {
		t.Fatalf("metrics: %d", status)
	}
	for _, want := range []string{
		`hdc_edge_jwe_requests_total{kid="k-c1",result="ok"}`,
		`hdc_edge_jwe_requests_total{kid="k-c2",result="invalid_encryption"}`,
		`hdc_edge_jwe_decrypted_bytes_total{kid="k-c1"}`,
		`hdc_edge_key_last_used_timestamp_seconds{kid="k-c1"}`,
		`hdc_edge_auth_requests_total{mode="token",result="ok"}`,
		`hdc_edge_key_registry_keys{status="active"}`,
	} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Fatalf("metrics lack %s", want)
		}
	}
}

// TestEdgeBackendKeys runs the reference Caddyfile with no registry file:
// the edge looks keys up in the backend's key plane over the hop, and
// follows its changes. A key works on first use; a retirement and a new
// key reach the edge through the feed; an unknown kid is refused; the
// admin API lists the keys the edge holds, and the metrics count the
// look-ups.
func TestEdgeBackendKeys(t *testing.T) {
	e := startEdge(t, edgetest.Keys, map[string]string{"HDC_KEY_REGISTRY": ""})
	c1 := e.token("c1", nil)
	send := func(kid, secret string) int {
		resp, _ := e.call(t, "POST", subscriptions, jwe.EncryptRequest(edgetest.Key(t, secret), jwe.Protected{Kid: kid}, []byte(`{"n":1}`)), encHeaders(c1))
		return resp.StatusCode
	}
	if got := send("k-c1", edgetest.SecretOf("k-c1")); got != 200 {
		t.Fatalf("the backend's key on first use: %d", got)
	}
	// The metrics are the process's: other runs of the test counted too.
	// The kid filter rules the unknown kid out: the backend is not asked.
	filtered := `hdc_edge_key_lookups_total{result="filtered"}`
	before := e.metric(t, filtered)
	if got := send("k-unknown", edgetest.SecretOf("k-c1")); got != 400 {
		t.Fatalf("an unknown kid: %d", got)
	}
	e.plane.Set("k-c1", "c1", edgetest.SecretOf("k-c1"), clientkey.Retired)
	e.plane.Set("k-c1-new", "c1", "ffffffffffffffff", clientkey.Active)
	testkit.Eventually(t, 10*time.Second, "the retirement to reach the edge", func() bool { return send("k-c1", edgetest.SecretOf("k-c1")) == 400 })
	// The two changes may reach the edge in separate turns of its feed:
	// the new key is the second, so its first use waits for it too.
	testkit.Eventually(t, 10*time.Second, "the new key to reach the edge", func() bool { return send("k-c1-new", "ffffffffffffffff") == 200 })
	if got := send("k-c1-new", "ffffffffffffffff"); got != 200 {
		t.Fatalf("a key added after the edge started, cached use: %d", got)
	}

	adminResp, err := e.client.Get(e.admin + "/hdc/keys")
	if err != nil {
		t.Fatal(err)
	}
	defer adminResp.Body.Close()
	var listed []listedKey
	if err := json.NewDecoder(adminResp.Body).Decode(&listed); err != nil {
		t.Fatal(err)
	}
	held := map[string]clientkey.Status{}
	for _, k := range listed {
		held[k.Kid] = k.Status
	}
	if held["k-c1-new"] != clientkey.Active || held["k-c1"] != clientkey.Retired || len(held) != 2 {
		t.Fatalf("the admin API lists %v", held)
	}
	if got := e.metric(t, filtered); got != before+1 {
		t.Errorf("%s went from %v to %v for one unknown kid", filtered, before, got)
	}
	for _, series := range []string{`hdc_edge_key_lookups_total{result="found"}`, `hdc_edge_key_lookups_total{result="cached"}`,
		`hdc_edge_token_cache_lookups_total{result="hit"}`, "hdc_edge_key_feed_up"} {
		if got := e.metric(t, series); got < 1 {
			t.Errorf("%s is %v", series, got)
		}
	}
}
