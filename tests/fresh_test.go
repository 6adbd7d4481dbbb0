package tests

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// freshRequests checks the freshness of encrypted requests through the
// edges of one deployment, an A256GCM key's client sealing every request
// with go-jose: an encrypted login and a webhook registration replayed
// byte for byte, through the other edge and through the same one, are
// refused as replays and change nothing; a request whose iat is ten
// minutes old is refused as stale; a new request is served; and a
// --require-fresh key refuses an envelope without iat and jti.
func freshRequests(t *testing.T, ops *stack, a, b *stack) {
	g := ops.newClientEnc("fresh-requests", encGCM)
	goJose := joseClients[len(joseClients)-1]
	seal := func(body []byte, iat int64) []byte {
		return goJose.run(t, body, "encrypt", g.Key, g.Kid, formJSON, encGCM, strconv.FormatInt(iat, 10), newJTI())
	}
	// post sends an envelope and returns the answer, opened when sealed:
	// an edge refuses a replay it saw itself plainly, before the backend;
	// the backend's refusal of one another edge saw comes sealed, as every
	// answer of the backend to an encrypted request does.
	post := func(e *stack, path string, env []byte, h map[string]string) *response {
		h = withBodyType(h, env)
		h[jweHeader] = "JWE"
		r := e.do("POST", path, env, h)
		if r.header.Get(jweHeader) == "JWE" {
			r.body, r.sealed = goJose.decrypt(t, g, formJSON, r.body), true
		}
		return r
	}
	login := seal(loginBody(g), time.Now().Unix())
	r := post(a, loginPath, login, nil)
	if r.status != http.StatusOK {
		t.Fatalf("a fresh encrypted login: %s", r)
	}
	var tk tokens
	if err := json.Unmarshal(r.body, &tk); err != nil || tk.AccessToken == "" {
		t.Fatalf("the login's answer: %v", err)
	}
	expectProblem(t, post(b, loginPath, login, nil), 400, "replayed_request")
	expectProblem(t, post(a, loginPath, login, nil), 400, "replayed_request")

	endpoint := "https://hooks.example.org/fresh-requests"
	register := seal([]byte(`{"endpoint":"`+endpoint+`","event_names":["user.delete"]}`), time.Now().Unix())
	if r := post(b, subsPath, register, bearer(tk)); r.status != http.StatusOK {
		t.Fatalf("a fresh registration: %s", r)
	}
	expectProblem(t, post(a, subsPath, register, bearer(tk)), 400, "replayed_request")
	stale := seal([]byte(`{"endpoint":"`+endpoint+`-2","event_names":["user.delete"]}`), time.Now().Add(-10*time.Minute).Unix())
	expectProblem(t, post(a, subsPath, stale, bearer(tk)), 400, "stale_request")

	list := a.sendSealed(sealedBy{goJose, formJSON}, g, "GET", subsPath, nil, bearer(tk))
	var subs struct {
		Subscriptions []struct{ Endpoint string } `json:"subscriptions"`
	}
	if err := json.Unmarshal(list.body, &subs); err != nil || list.status != http.StatusOK {
		t.Fatalf("list: %s", list)
	}
	if len(subs.Subscriptions) != 1 || subs.Subscriptions[0].Endpoint != endpoint {
		t.Fatalf("after a registration and its replay and a stale one, the workspace has %+v", subs.Subscriptions)
	}

	// An A128CBC-HS256 key made with --require-fresh refuses an envelope
	// without iat and jti, as the specification's clients send it.
	strict := ops.newClientEnc("fresh-requests-strict", "", "--require-fresh")
	expectProblem(t, post(b, loginPath, goJose.encrypt(t, strict, formJSON, loginBody(strict)), nil), 400, "freshness_required")
}

// TestFreshRequests runs freshRequests on one stack (SQLite, one edge),
// its edge serving the reference Caddyfile's site over plain HTTP and over
// TLS (HTTP/2 from Go's client).
func TestFreshRequests(t *testing.T) {
	for _, site := range []struct {
		name  string
		start func(*testing.T) *stack
	}{{"http", func(t *testing.T) *stack { return startStack(t) }}, {"https", startTLSStack}} {
		t.Run(site.name, func(t *testing.T) {
			s := site.start(t)
			freshRequests(t, s, s, s)
		})
	}
}

// TestCallSendsFreshRequests: hdc call names iat and a new jti in every
// envelope, so that it works with an A256GCM key (whose envelopes must
// name them) for a plain request and for an upload read from a file, and
// with an A128CBC-HS256 key made with --require-fresh.
func TestCallSendsFreshRequests(t *testing.T) {
	s := startStack(t)
	file, _ := randomFile(t, t.TempDir(), "consultation.bin", 200<<10)
	for _, tt := range []struct {
		name string
		c    *apiClient
		enc  string
	}{
		{"A256GCM", s.newClientEnc("call-gcm", encGCM), encGCM},
		{"A128CBC-HS256 --require-fresh", s.newClientEnc("call-strict", "", "--require-fresh"), "A128CBC-HS256"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			endpoint := "https://hooks.example.org/" + tt.c.ID
			s.hdcCall(tt.c, "--encrypt", "--enc", tt.enc, "POST", subsPath, "--data", `{"endpoint":"`+endpoint+`","event_names":["user.delete"]}`)
			if out, _ := s.hdcCall(tt.c, "--encrypt", "--enc", tt.enc, "GET", subsPath); !bytes.Contains(out, []byte(endpoint)) {
				t.Fatalf("the list lacks the registration: %s", out)
			}
			if out, _ := s.hdcCall(tt.c, "--encrypt", "--enc", tt.enc, "POST", uploadPath, "--file", file); !bytes.Contains(out, []byte("care_context_id")) {
				t.Fatalf("upload: %s", out)
			}
		})
	}
}
