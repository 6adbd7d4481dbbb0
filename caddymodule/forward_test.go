package caddymodule

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestUnknownLengthPastRouteLimit runs the reference Caddyfile with no
// upload quota: a body of no declared length past its route's limit
// (request_body's), over HTTP/1.1 chunked and over h2c, is answered 413,
// never reaches the backend, and costs the backend nothing: after more
// of them than Caddy's passive health check forgives (three failures in
// 10 s), an upload within the limit is still served.
func TestUnknownLengthPastRouteLimit(t *testing.T) {
	e := startEdge(t, edgetest.Keys, map[string]string{"HDC_RATELIMIT_REDIS": "", "HDC_LOG_LEVEL": "error",
		"HDC_UPLOAD_MAX_BODY": "100KiB"})
	h2c := &http.Client{Transport: &http.Transport{Protocols: new(http.Protocols)}}
	h2c.Transport.(*http.Transport).Protocols.SetUnencryptedHTTP2(true)
	token := e.token("c1", nil)
	send := func(c *http.Client, body []byte, length int64) *http.Response {
		t.Helper()
		req, err := http.NewRequest("POST", e.base+"/mr/api/v2/docs", io.NopCloser(bytes.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for i := range 4 {
		for _, c := range []struct {
			name   string
			client *http.Client
		}{{"HTTP/1.1 chunked", http.DefaultClient}, {"h2c", h2c}} {
			resp := send(c.client, testkit.RandomBytes(200<<10), -1)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("%s, upload %d past the route's limit: %d %s, want 413 and a problem", c.name, i, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		}
	}
	if n := e.up.count(); n != 0 {
		t.Fatalf("%d uploads past the limit reached the backend", n)
	}
	if resp := send(h2c, testkit.RandomBytes(10<<10), -1); resp.StatusCode != http.StatusOK || e.up.count() != 1 {
		t.Fatalf("an upload within the limit after the refused ones: %d, %d at the backend", resp.StatusCode, e.up.count())
	}
}
