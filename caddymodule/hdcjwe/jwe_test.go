package hdcjwe

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// newTestApp returns the hdc app over a registry file of keys.
func newTestApp(t testing.TB, keys []registryfile.Entry) *edge.App {
	t.Helper()
	app := &edge.App{Keys: edge.KeysConfig{Registry: edgetest.Registry(t, keys), Keeper: edgetest.KeeperURL}}
	edgetest.Provision(t, app)
	return app
}

func newTestJWE(t testing.TB, login bool) *JWE {
	return &JWE{
		Login: login, MaxBody: 8 << 20, SpoolThreshold: 4 << 10, SpoolDir: t.TempDir(),
		MaxResponse: 1 << 20, app: newTestApp(t, edgetest.Keys), logger: zap.NewNop(),
	}
}

// upstream records what reached it and answers with a fixed response.
type upstream struct {
	called        bool
	body          []byte
	header        http.Header
	contentLength int64
	te            []string
	status        int
	reply         []byte
	replyType     string
	err           error
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	u.called = true
	u.header = r.Header.Clone()
	u.contentLength = r.ContentLength
	u.te = r.TransferEncoding
	u.body, _ = io.ReadAll(r.Body)
	if u.err != nil {
		return u.err
	}
	if u.replyType == "" {
		u.replyType = "application/json"
	}
	w.Header().Set("Content-Type", u.replyType)
	w.Header().Set("Etag", `"plain-etag"`)
	if u.status == 0 {
		u.status = http.StatusOK
	}
	w.WriteHeader(u.status)
	_, _ = w.Write(u.reply)
	return nil
}

// serve runs h for r as the authenticated client, the way Caddy would.
func serve(t testing.TB, h *JWE, r *http.Request, client string, next caddyhttp.Handler) *httptest.ResponseRecorder {
	t.Helper()
	ctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
	r = r.WithContext(context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{}))
	if client != "" {
		edge.SetClientID(r, client)
	}
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, r, next); err != nil {
		t.Fatalf("ServeHTTP returned %v", err)
	}
	return w
}

func encryptedRequest(method, target string, body []byte, contentType string) *http.Request {
	r := httptest.NewRequest(method, target, bytes.NewReader(body))
	r.Header.Set("X-Encryption", "JWE")
	r.Header.Set("Content-Type", contentType)
	return r
}

// openResponse decrypts a response envelope with the given shared key.
func openResponse(t testing.TB, w *httptest.ResponseRecorder, shared string) []byte {
	t.Helper()
	e, ct := edgetest.ParseAnswer(t, w.Header(), w.Body.Bytes())
	pt, err := e.Decrypt(edgetest.Key(t, shared), ct)
	if err != nil {
		t.Fatalf("response does not decrypt: %v", err)
	}
	return pt
}

func TestJWERoundTrip(t *testing.T) {
	key := edgetest.Key(t, edgetest.SecretOf("k-c1"))
	small := []byte(`{"endpoint":"https://example.org/hook","event_names":["user.delete"]}`)
	large := []byte(`{"file":"` + strings.Repeat("QUJD", 50_000) + `"}`) // 200 kB: spooled to disk
	tests := []struct {
		name     string
		kid      string
		body     []byte
		envelope []byte
		ctype    string
	}{
		{"flattened", "k-c1", small, jwe.EncryptRequest(key, jwe.Protected{Kid: "k-c1"}, small), "application/json"},
		{"flattened as jose+json", "k-c1", small, jwe.EncryptRequest(key, jwe.Protected{Kid: "k-c1"}, small), "application/jose+json"},
		{"compact", "k-c1", small, jwe.EncryptCompact(key, jwe.Protected{Kid: "k-c1"}, small), "application/jose"},
		{"retiring key", "k-c1-old", small, jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c1-old")), jwe.Protected{Kid: "k-c1-old"}, small), "application/json"},
		{"large, spooled", "k-c1", large, jwe.EncryptRequest(key, jwe.Protected{Kid: "k-c1"}, large), "application/json; charset=utf-8"},
		{"empty plaintext", "k-c1", []byte{}, jwe.EncryptRequest(key, jwe.Protected{Kid: "k-c1"}, nil), "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestJWE(t, false)
			up := &upstream{reply: []byte(`{"id":"w1","status":"success"}`), status: http.StatusCreated}
			r := encryptedRequest("POST", "/notification/v1/connect/webhook/subscriptions", tt.envelope, tt.ctype)
			r.Header.Set("X-Hdc-Key-Id", "forged")
			r.Header.Set("Accept-Encoding", "gzip")
			w := serve(t, h, r, "c1", up)

			if !bytes.Equal(up.body, tt.body) {
				t.Fatalf("upstream got %d bytes, want the %d-byte plaintext", len(up.body), len(tt.body))
			}
			if up.contentLength != int64(len(tt.body)) || up.header.Get("Content-Length") != strconv.Itoa(len(tt.body)) {
				t.Fatalf("lengths: field %d header %q, want %d", up.contentLength, up.header.Get("Content-Length"), len(tt.body))
			}
			if len(up.te) != 0 || up.header.Get("Transfer-Encoding") != "" {
				t.Fatalf("Transfer-Encoding reached the upstream: %v", up.te)
			}
			for name, want := range map[string]string{"X-Encryption": "", "Content-Type": "application/json",
				"X-Hdc-Key-Id": tt.kid, "X-Hdc-Key-Client-Id": "c1", "Accept-Encoding": ""} {
				if got := up.header.Get(name); got != want {
					t.Fatalf("upstream header %s = %q, want %q", name, got, want)
				}
			}
			if w.Code != http.StatusCreated {
				t.Fatalf("status %d, want the upstream's 201", w.Code)
			}
			if got := openResponse(t, w, edgetest.SecretOf(tt.kid)); string(got) != string(up.reply) {
				t.Fatalf("decrypted response %q", got)
			}
			if compact := w.Header().Get("Content-Type") == "application/jose"; compact != (tt.ctype == "application/jose") {
				t.Fatalf("answer Content-Type %q to a request of %q", w.Header().Get("Content-Type"), tt.ctype)
			}
			if w.Header().Get("Etag") != "" || w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
				t.Fatalf("response headers not rewritten: %v", w.Header())
			}
		})
	}
}

func TestJWEResponseOnly(t *testing.T) {
	tests := []struct {
		name, accept, wantType string
	}{
		{"default", "", "application/json"},
		{"json asked", "application/json", "application/json"},
		{"compact asked", "application/jose", "application/jose"},
		{"compact among others", "text/html;q=0.5, application/jose;q=0.9", "application/jose"},
		{"jose+json is JSON", "application/jose+json", "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestJWE(t, false)
			up := &upstream{reply: []byte(`{"resourceType":"Bundle"}`)}
			r := httptest.NewRequest("GET", "/health/api/v1/fhir/retrieve?identifier=x", nil)
			r.Header.Set("X-Encryption", "JWE")
			r.Header.Set("X-Encryption-Kid", "k-c1")
			if tt.accept != "" {
				r.Header.Set("Accept", tt.accept)
			}
			w := serve(t, h, r, "c1", up)
			if got := w.Header().Get("Content-Type"); got != tt.wantType {
				t.Fatalf("Content-Type %q, want %q", got, tt.wantType)
			}
			if got := openResponse(t, w, edgetest.SecretOf("k-c1")); string(got) != string(up.reply) {
				t.Fatalf("decrypted %q", got)
			}
			if up.header.Get(contract.HeaderEncryptionKid) != "" || up.header.Get(contract.HeaderKeyID) != "k-c1" {
				t.Fatalf("upstream headers %v", up.header)
			}
		})
	}
}

// TestJWEUnknownLength: a request whose length is unknown until its
// body ends (HTTP/3 and HTTP/2 without content-length, a chunked HTTP/1.1
// body) is body-less when its body turns out empty, and carries its
// envelope otherwise.
func TestJWEUnknownLength(t *testing.T) {
	envelope := jwe.EncryptCompact(edgetest.Key(t, edgetest.SecretOf("k-c1")), jwe.Protected{Kid: "k-c1"}, []byte(`{"a":1}`))
	tests := []struct {
		name      string
		body      []byte
		chunked   bool
		wantUp    string // the body the upstream gets
		wantProto int
	}{
		{"HTTP/3, no body", nil, false, "", 3},
		{"HTTP/2, no body", nil, false, "", 2},
		{"HTTP/1.1, an empty chunked body", nil, true, "", 1},
		{"HTTP/3, an envelope", envelope, false, `{"a":1}`, 3},
		{"HTTP/1.1, a chunked envelope", envelope, true, `{"a":1}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestJWE(t, false)
			up := &upstream{reply: []byte(`{"resourceType":"Bundle"}`)}
			r := httptest.NewRequest("POST", "/x", bytes.NewReader(tt.body))
			r.ProtoMajor, r.ContentLength = tt.wantProto, -1
			if tt.chunked {
				r.TransferEncoding = []string{"chunked"}
			}
			r.Header.Set("X-Encryption", "JWE")
			r.Header.Set("X-Encryption-Kid", "k-c1")
			r.Header.Set("Content-Type", "application/jose")
			w := serve(t, h, r, "c1", up)
			if w.Code != http.StatusOK || !up.called {
				t.Fatalf("%d: %s", w.Code, w.Body)
			}
			if string(up.body) != tt.wantUp {
				t.Fatalf("the upstream got %q, want %q", up.body, tt.wantUp)
			}
			if got := openResponse(t, w, edgetest.SecretOf("k-c1")); string(got) != string(up.reply) {
				t.Fatalf("decrypted %q", got)
			}
		})
	}
}

// TestJWEUniformFailures: every key-related failure gives the same
// status, headers and bytes, and never reaches the upstream.
func TestJWEUniformFailures(t *testing.T) {
	plain := []byte(`{"a":1}`)
	good := jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c1")), jwe.Protected{Kid: "k-c1"}, plain)
	var env map[string]string
	_ = json.Unmarshal(good, &env)
	tamper := func(member string) []byte {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		e[member] = edgetest.FlipB64(t, env[member])
		out, _ := json.Marshal(e)
		return out
	}
	tests := []struct {
		name     string
		client   string
		envelope []byte
		header   map[string]string
	}{
		{"flipped tag", "c1", tamper("tag"), nil},
		{"flipped ciphertext", "c1", tamper("ciphertext"), nil},
		{"flipped iv", "c1", tamper("iv"), nil},
		{"bad padding", "c1", edgetest.RawEnvelope(t, edgetest.SecretOf("k-c1"), "k-c1", make([]byte, 32)), nil},
		{"unknown kid", "c1", jwe.EncryptRequest(edgetest.Key(t, "zzzzzzzzzzzzzzzz"), jwe.Protected{Kid: "k-nobody"}, plain), nil},
		{"retired kid", "c1", jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c1-dead")), jwe.Protected{Kid: "k-c1-dead"}, plain), nil},
		{"another client's kid", "c1", jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c2")), jwe.Protected{Kid: "k-c2"}, plain), nil},
		{"wrong key for the kid", "c1", jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c2")), jwe.Protected{Kid: "k-c1"}, plain), nil},
		{"response-only, foreign kid", "c1", nil, map[string]string{"X-Encryption-Kid": "k-c2"}},
		{"response-only, unknown kid", "c1", nil, map[string]string{"X-Encryption-Kid": "nope"}},
	}
	// The control for "bad padding": the same construction with valid
	// padding (a full block of 16s after {"a":1} padded by hand) goes through.
	padded := append([]byte(`{"a":1}`), bytes.Repeat([]byte{9}, 9)...)
	up := &upstream{}
	serve(t, newTestJWE(t, false), encryptedRequest("POST", "/x", edgetest.RawEnvelope(t, edgetest.SecretOf("k-c1"), "k-c1", padded), "application/json"), "c1", up)
	if string(up.body) != `{"a":1}` {
		t.Fatalf("control envelope did not decrypt: upstream got %q", up.body)
	}

	var first *httptest.ResponseRecorder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestJWE(t, false)
			up := &upstream{}
			r := encryptedRequest("POST", "/x", tt.envelope, "application/json")
			if tt.envelope == nil {
				r = httptest.NewRequest("GET", "/x", nil)
				r.Header.Set("X-Encryption", "JWE")
			}
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			w := serve(t, h, r, tt.client, up)
			if up.called {
				t.Fatal("the request reached the upstream")
			}
			if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"code":"invalid_encryption"`) {
				t.Fatalf("got %d %s", w.Code, w.Body)
			}
			if first == nil {
				first = w
				return
			}
			if !bytes.Equal(w.Body.Bytes(), first.Body.Bytes()) || !equalHeaders(w.Header(), first.Header()) {
				t.Fatalf("answer differs from the first failure:\n%v %s\n%v %s", w.Header(), w.Body, first.Header(), first.Body)
			}
		})
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a.Get(k) != b.Get(k) {
			return false
		}
	}
	return true
}

var (
	b64url = base64.RawURLEncoding
	b64std = base64.StdEncoding
)

// TestJWEAnyClient: without a bearer token any client's usable key
// opens the request, and the upstream learns whose key it was (and a
// client cannot say so itself).
func TestJWEAnyClient(t *testing.T) {
	body := []byte(`{"refresh_token":"hdc_rt_x"}`)
	tests := []struct {
		name, kid  string
		wantStatus int
		wantOwner  string
	}{
		{"first client's key", "k-c1", 200, "c1"},
		{"second client's key", "k-c2", 200, "c2"},
		{"retiring key", "k-c1-old", 200, "c1"},
		{"retired key", "k-c1-dead", 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestJWE(t, false)
			h.AnyClient = true
			up := &upstream{reply: []byte(`{}`)}
			r := encryptedRequest("POST", "/connect-auth/v1/account/refresh", jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf(tt.kid)), jwe.Protected{Kid: tt.kid}, body), "application/json")
			r.Header.Set(contract.HeaderKeyClientID, "forged")
			w := serve(t, h, r, "", up)
			if w.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.wantStatus, w.Body)
			}
			if tt.wantStatus != 200 {
				return
			}
			if got := up.header.Get(contract.HeaderKeyClientID); got != tt.wantOwner || !bytes.Equal(up.body, body) {
				t.Fatalf("upstream got key client %q and %q", got, up.body)
			}
			openResponse(t, w, edgetest.SecretOf(tt.kid))
		})
	}
}

func TestJWELogin(t *testing.T) {
	key := edgetest.Key(t, edgetest.SecretOf("k-c1"))
	// A login under another client's key gets the one answer of every key
	// failure, in the clear; a body that is not a login comes encrypted, the
	// key being established.
	tests := []struct {
		name      string
		body      string
		wantCode  string // "" for success
		encrypted bool
	}{
		{"own client", `{"client_id":"c1","client_secret":"s"}`, "", true},
		{"other client", `{"client_id":"c2","client_secret":"s"}`, "invalid_encryption", false},
		{"no client_id", `{"client_secret":"s"}`, "invalid_request", true},
		{"client_id not a string", `{"client_id":7}`, "invalid_request", true},
		{"not JSON", `client_id=c1`, "invalid_request", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestJWE(t, true)
			up := &upstream{reply: []byte(`{"access_token":"t"}`)}
			r := encryptedRequest("POST", "/connect-auth/v1/account/login", jwe.EncryptRequest(key, jwe.Protected{Kid: "k-c1"}, []byte(tt.body)), "application/json")
			w := serve(t, h, r, "", up)
			if tt.wantCode == "" {
				if string(up.body) != tt.body {
					t.Fatalf("upstream got %q", up.body)
				}
				openResponse(t, w, edgetest.SecretOf("k-c1"))
				return
			}
			answer := w.Body.Bytes()
			if tt.encrypted {
				answer = openResponse(t, w, edgetest.SecretOf("k-c1"))
			}
			if up.called || w.Code != 400 || !strings.Contains(string(answer), `"code":"`+tt.wantCode+`"`) {
				t.Fatalf("called=%v, answer %d %s", up.called, w.Code, answer)
			}
		})
	}
}

func TestJWEResponses(t *testing.T) {
	key := edgetest.Key(t, edgetest.SecretOf("k-c1"))
	env := jwe.EncryptRequest(key, jwe.Protected{Kid: "k-c1"}, []byte(`{}`))
	tests := []struct {
		name       string
		up         *upstream
		wantStatus int
		wantCode   string // of the decrypted problem, "" when the upstream body is expected
		wantEmpty  bool
	}{
		{"backend error is encrypted too", &upstream{status: 404, replyType: "application/problem+json",
			reply: []byte(`{"code":"not_found","status":404}`)}, 404, "", false},
		{"non-JSON body is encrypted, not passed in clear", &upstream{replyType: "text/plain", reply: []byte("secret text")}, 200, "", false},
		{"too large is refused, never sent in clear", &upstream{reply: bytes.Repeat([]byte("x"), 2<<20)}, 502, "response_too_large", false},
		{"handler error", &upstream{err: caddyhttp.Error(http.StatusBadGateway, errors.New("dial refused"))}, 502, "upstream_error", false},
		{"no content", &upstream{status: 204}, 204, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestJWE(t, false)
			w := serve(t, h, encryptedRequest("POST", "/x", env, "application/json"), "c1", tt.up)
			if w.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d", w.Code, tt.wantStatus)
			}
			if tt.wantEmpty {
				if w.Body.Len() != 0 {
					t.Fatalf("body %q", w.Body)
				}
				return
			}
			if bytes.Contains(w.Body.Bytes(), []byte("secret text")) || bytes.Contains(w.Body.Bytes(), []byte("xxxx")) {
				t.Fatal("plaintext in the response")
			}
			pt := openResponse(t, w, edgetest.SecretOf("k-c1"))
			if tt.wantCode == "" {
				if !bytes.Equal(pt, tt.up.reply) {
					t.Fatalf("decrypted %q", pt)
				}
				return
			}
			if !strings.Contains(string(pt), `"code":"`+tt.wantCode+`"`) {
				t.Fatalf("decrypted %s, want code %s", pt, tt.wantCode)
			}
		})
	}
}

func TestJWEPlainAndRequire(t *testing.T) {
	h := newTestJWE(t, false)
	up := &upstream{reply: []byte(`{"ok":true}`)}
	r := httptest.NewRequest("POST", "/x", strings.NewReader(`{"a":1}`))
	r.Header.Set("X-Hdc-Key-Id", "forged")
	w := serve(t, h, r, "c1", up)
	if string(up.body) != `{"a":1}` || up.header.Get(contract.HeaderKeyID) != "" || w.Body.String() != `{"ok":true}` {
		t.Fatalf("plain request: upstream %q %v, answer %s", up.body, up.header, w.Body)
	}
	h.Require = true
	up = &upstream{}
	w = serve(t, h, httptest.NewRequest("POST", "/x", strings.NewReader(`{"a":1}`)), "c1", up)
	if up.called || w.Code != 400 || !strings.Contains(w.Body.String(), "encryption_required") {
		t.Fatalf("require: called=%v %d %s", up.called, w.Code, w.Body)
	}
}

func TestJWENewKeyWithoutWaitingForPoll(t *testing.T) {
	h := newTestJWE(t, false)
	var added registryfile.Entry
	err := registryfile.Update(h.app.Keys.Registry, edgetest.Sealer, func(f *registryfile.File) (err error) {
		added, err = f.Add("c1", "", "", "", false, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"n":1}`)
	up := &upstream{reply: []byte(`{}`)}
	w := serve(t, h, encryptedRequest("POST", "/x", jwe.EncryptRequest(edgetest.Key(t, added.Secret), jwe.Protected{Kid: added.Kid}, body), "application/json"), "c1", up)
	if !bytes.Equal(up.body, body) || w.Code != 200 {
		t.Fatalf("a key added before the next poll was refused: %d %s", w.Code, w.Body)
	}
}

func TestEncryptionRequested(t *testing.T) {
	tests := []struct {
		name      string
		values    []string
		encrypted bool
		refused   bool
	}{
		{"absent", nil, false, false},
		{"JWE", []string{"JWE"}, true, false},
		{"lower case", []string{"jwe"}, true, false},
		{"padded", []string{" JWE "}, true, false},
		{"a list", []string{"JWE, JWE"}, false, true},
		{"two fields", []string{"JWE", "JWE"}, false, true},
		{"another value", []string{"x"}, false, true},
		{"empty", []string{""}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.values {
				h.Add(contract.HeaderEncryption, v)
			}
			encrypted, p := encryptionRequested(h)
			if encrypted != tt.encrypted || (p != nil) != tt.refused {
				t.Fatalf("encryptionRequested = %v, %v", encrypted, p)
			}
		})
	}
}

// unread is a body that fails the test when it is read.
type unread struct{ t *testing.T }

func (u unread) Read([]byte) (int, error) { u.t.Error("the body was read"); return 0, io.EOF }

// TestAnnouncedLengthOverTheLimit: a Content-Length past the route's limit
// is refused at once, without reading a byte or reserving memory for it.
func TestAnnouncedLengthOverTheLimit(t *testing.T) {
	h := newTestJWE(t, false)
	h.MaxBody = 64 << 10
	r := httptest.NewRequest("POST", "/", io.NopCloser(unread{t}))
	r.ContentLength = 1_390_000
	r.Header.Set("X-Encryption", "JWE")
	r.Header.Set("Content-Type", "application/json")
	up := &upstream{}
	w := serve(t, h, r, "c1", up)
	if w.Code != http.StatusRequestEntityTooLarge || up.called {
		t.Fatalf("%d %s, upstream called %v", w.Code, w.Body, up.called)
	}
	if !strings.Contains(w.Body.String(), "limit of 64KiB") {
		t.Fatalf("the problem does not state the limit: %s", w.Body)
	}
}
