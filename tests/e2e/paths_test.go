package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestNonCanonicalPathsAreRefused (third review, finding 6; fourth review,
// finding 8): Caddy matches a route on the cleaned, case-folded path, while
// the hop would carry the path as sent, so the edge's decision and the
// backend's would be about different paths. The edge refuses a path that is
// not one of the API's as written (an empty segment, a dot segment, any
// percent-encoding, another case, a character outside the unreserved ones)
// with a 400 problem, and nothing reaches the backend; the canonical paths
// are served.
func TestNonCanonicalPathsAreRefused(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	host := strings.TrimPrefix(s.Edge, "http://")
	login := `{"client_id":"x","client_secret":"y"}`
	tests := []struct{ method, path, body string }{
		{"POST", "//connect-auth/v1/account/login", login},
		{"GET", "/internal/v1/keys/K/../../../../.well-known/jwks.json", ""},
		{"POST", "/connect-auth/v1/account/./login", login},
		{"POST", "/connect-auth/v1/x/../account/login", login},
		{"POST", "/connect-auth/v1/account/%2e%2e/account/login", login},
		{"POST", "/connect-auth/v1/account/%2E/login", login},
		{"POST", "/connect-auth%2fv1/account/login", login},
		{"DELETE", "/notification/v1/connect/webhook/subscriptions/x%5C..%5Cy", ""},
		{"GET", "/.well-known/jwks.json/.", ""},
		{"GET", "/health/api/v1/fhir//retrieve?identifier=x", ""},
		// The fourth review's: routed by Caddy, read otherwise (404) by the
		// backend.
		{"POST", "/CONNECT-AUTH/v1/account/refresh", `{"refresh_token":"x"}`},
		{"GET", "/mr/api/v2/DOCS", ""},
		{"POST", "/connect-auth/v1/account/log%C4%B0n", login},
		{"GET", "/notification/v1/connect/webhook/subscriptions/..;", ""},
		{"GET", "/notification/v1/connect/webhook/subscriptions/%252e%252e", ""},
		{"GET", "/notification/v1/connect/webhook/subscriptions/%c0%ae%c0%ae", ""},
		{"GET", "/notification/v1/connect/webhook/subscriptions/%EF%BC%8E%EF%BC%8E", ""},
		{"DELETE", "/notification/v1/connect/webhook/subscriptions/x%00", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			before := served(s)
			resp, body := rawRequest(t, host, tt.method, tt.path, tt.body)
			testkit.WantProblem(t, resp.StatusCode, resp.Header, body, http.StatusBadRequest, "non_canonical_path")
			if after := served(s); after != before {
				t.Fatalf("the backend served %d requests", after-before)
			}
		})
	}
	// A path that matches no route is answered by the edge, not routed.
	resp, body := rawRequest(t, host, "GET", "/.well-known%5Cjwks.json", "")
	testkit.WantProblem(t, resp.StatusCode, resp.Header, body, http.StatusNotFound, "not_found")
	// The canonical paths of the same routes are served.
	if resp, body := rawRequest(t, host, "GET", "/.well-known/jwks.json", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("the JWKS: %d %s", resp.StatusCode, body)
	}
	if resp, body := rawRequest(t, host, "POST", "/connect-auth/v1/account/login", login); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a login with a wrong secret: %d %s", resp.StatusCode, body)
	}
}

// served counts the requests the stack's backend logged, but the edge's
// own, which go on meanwhile: of the key plane (its kid filter, its long
// polls of the change feed, the clients' limits), its reports and its load
// balancer's health checks.
func served(s *hdctest.Stack) int {
	n := 0
	for _, line := range strings.Split(s.Output("hdc-backend"), "\n") {
		if strings.Contains(line, `"msg":"request"`) && !slices.ContainsFunc(
			[]string{"GET " + contract.PathKeyChanges, "GET " + contract.PathKeyFilter, "GET " + contract.PathClientLimits,
				"GET " + contract.PathReady, "GET " + contract.PathHealth, "POST " + contract.PathEdgeReport},
			func(own string) bool { return strings.Contains(line, `"route":"`+own+`"`) }) {
			n++
		}
	}
	return n
}

// rawRequest sends one HTTP/1.1 request with its path exactly as given,
// which Go's client would not send, and reads the answer.
func rawRequest(t *testing.T, host, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	head := method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n"
	if body != "" {
		head += "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	}
	if _, err := io.WriteString(conn, head+"\r\n"+body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
