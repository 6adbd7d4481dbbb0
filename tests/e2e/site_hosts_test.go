package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestOtherHostsGetAProblem (fourth review, finding 9): a request for a
// host the site does not name got Caddy's empty 200; it gets a 421
// misdirected_request problem, on every route and on none, and nothing
// reaches the backend. The site's own host is served as before.
func TestOtherHostsGetAProblem(t *testing.T) {
	t.Parallel()
	s := hdctest.StartTLSStack(t)
	own := strings.TrimPrefix(s.Edge, "https://")
	login := `{"client_id":"x","client_secret":"y"}`
	for _, tt := range []struct{ host, method, path string }{
		{"other.example", "POST", hdctest.LoginPath},
		{"other.example", "GET", "/.well-known/jwks.json"},
		{"other.example", "GET", "/no-such-route"},
		{"localhost", "POST", hdctest.LoginPath},
		{"127.0.0.2", "POST", hdctest.LoginPath},
	} {
		t.Run(tt.host+" "+tt.method+" "+tt.path, func(t *testing.T) {
			before := served(s)
			status, header, body := hostRequest(t, s, tt.host, tt.method, tt.path, login)
			testkit.WantProblem(t, status, header, body, http.StatusMisdirectedRequest, problem.CodeMisdirectedRequest)
			if after := served(s); after != before {
				t.Fatalf("the backend served %d requests", after-before)
			}
		})
	}
	if status, _, body := hostRequest(t, s, own, "POST", hdctest.LoginPath, login); status != http.StatusUnauthorized {
		t.Fatalf("a login with a wrong secret, for the site's own host: %d %s", status, body)
	}
}

// hostRequest sends a request to the stack's edge that names host.
func hostRequest(t *testing.T, s *hdctest.Stack, host, method, path, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.Edge+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Content-Type", hdctest.JSONType)
	resp, err := s.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}
