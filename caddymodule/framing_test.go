package caddymodule

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
)

// TestChunkedRequestsEndTheirConnection: the edge answers a chunked
// HTTP/1.1 request and then closes its connection, on every route, so that
// bytes after a chunked body are never read as a request where
// hdc_framing cannot see them; a request with a Content-Length keeps it.
func TestChunkedRequestsEndTheirConnection(t *testing.T) {
	e := startEdge(t, edgetest.Keys, nil)
	tok := e.token("c1", nil)
	tests := []struct {
		name, method, path, token string
		chunked, wantClose        bool
	}{
		{"a public route, chunked", http.MethodPost, "/connect-auth/v1/account/login", "", true, true},
		{"a token route, chunked", http.MethodPost, subscriptions, tok, true, true},
		{"no route, chunked", http.MethodPost, "/no/such/route", "", true, true},
		{"a token route, with a length", http.MethodPost, subscriptions, tok, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, e.base+tt.path, strings.NewReader(`{"endpoint":"https://example.org/hook"}`))
			if err != nil {
				t.Fatal(err)
			}
			if tt.chunked {
				req.ContentLength = -1 // unknown: net/http sends the body chunked
			}
			req.Header.Set("Content-Type", "application/json")
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.Close != tt.wantClose {
				t.Fatalf("%d: the connection closes: %v, want %v", resp.StatusCode, resp.Close, tt.wantClose)
			}
		})
	}
}
