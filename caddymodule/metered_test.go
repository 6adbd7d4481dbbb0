package caddymodule

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/ratelimit"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestForwardSpoolsMeteredBody: hdc_forward reads a metered body whole
// before the next handler (reverse_proxy) gets any of it, which then gets
// it with its length, in memory or from a file past 2 MiB; a body that
// passes its quota is refused there, and one past the route's limit
// (request_body's) answered 413, and the next handler never runs.
func TestForwardSpoolsMeteredBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		size   int
		quota  int64
		limit  int64 // the route's, request_body's
		passed bool
	}{
		{"in memory", 100 << 10, 10 << 20, 64 << 20, false},
		{"on disk", 3 << 20, 10 << 20, 64 << 20, false},
		{"past the quota", 3 << 20, 2 << 20, 64 << 20, true},
		{"past the route's limit", 3 << 20, 10 << 20, 1 << 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mem, err := ratelimit.NewMemory(10)
			if err != nil {
				t.Fatal(err)
			}
			m := ratelimit.NewMeter(mem, "c:c1", tt.quota)
			if _, err := m.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			body := testkit.RandomBytes(tt.size)
			r := httptest.NewRequest("POST", "/mr/api/v2/docs", nil)
			w := httptest.NewRecorder()
			r.Body = &meteredBody{ReadCloser: http.MaxBytesReader(w, io.NopCloser(bytes.NewReader(body)), tt.limit),
				ctx: context.Background(), meter: m, logger: zap.NewNop()}
			r.ContentLength = -1
			var got []byte
			var length int64
			next := caddyhttp.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) error {
				length = r.ContentLength
				got, err = io.ReadAll(r.Body)
				r.Body.Close()
				return err
			})
			err = Forward{}.ServeHTTP(w, r, next)
			if tt.limit < int64(tt.size) {
				if err != nil || w.Code != http.StatusRequestEntityTooLarge || got != nil || !strings.Contains(w.Body.String(), `"code":"payload_too_large"`) {
					t.Fatalf("a body past the route's limit: %v, %d %s, and the next handler read %d bytes", err, w.Code, w.Body, len(got))
				}
				return
			}
			if tt.passed {
				if !errors.Is(err, errQuotaPassed) || got != nil {
					t.Fatalf("a body past its quota: %v, and the next handler read %d bytes", err, len(got))
				}
				return
			}
			if err != nil || length != int64(len(body)) || !bytes.Equal(got, body) {
				t.Fatalf("%v; the next handler got %d bytes of a length %d, want the %d sent", err, len(got), length, len(body))
			}
		})
	}
}

// TestUploadQuotaMetered: the reference Caddyfile in front of a recording
// upstream, with a daily upload quota of 100 kB counted in memory, and
// uploads that declare no length (HTTP/2 without content-length). One that
// fits reaches the upstream whole, with its length; one that passes what
// is left, plain or encrypted, is answered 429 quota_exceeded, and nothing
// of it reaches the upstream. The bytes the edge read stay counted and the
// rest of what it reserved is given back: a declared upload of exactly
// what the refusal says is left passes, one byte more is refused.
func TestUploadQuotaMetered(t *testing.T) {
	e := startEdge(t, testKeys, map[string]string{"HDC_RATELIMIT_REDIS": "", "HDC_LOG_LEVEL": "error",
		"HDC_RATELIMIT_UPLOAD_BYTES_PER_DAY": "100kB"})
	h2c := &http.Client{Transport: &http.Transport{Protocols: new(http.Protocols)}}
	h2c.Transport.(*http.Transport).Protocols.SetUnencryptedHTTP2(true)
	token := e.token("c1", nil)
	send := func(body []byte, length int64, header map[string]string) *http.Response {
		req, err := http.NewRequest("POST", e.base+"/mr/api/v2/docs", io.NopCloser(bytes.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		req.Header.Set("Authorization", "Bearer "+token)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := h2c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	plain := map[string]string{"Content-Type": "application/octet-stream"}
	first := testkit.RandomBytes(60_000)
	if resp := send(first, -1, plain); resp.StatusCode != http.StatusOK || resp.Proto != "HTTP/2.0" {
		t.Fatalf("the first upload: %d over %s", resp.StatusCode, resp.Proto)
	}
	sum := sha256.Sum256(first)
	if hit := e.up.last(); e.up.count() != 1 || hit.size != 60_000 || hit.contentLength != 60_000 || hit.te != nil || hit.sha256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("the upstream got %d requests, the last of %d bytes (length %d, %v)", e.up.count(), hit.size, hit.contentLength, hit.te)
	}
	var left int64
	for _, refused := range []struct {
		name   string
		body   []byte
		header map[string]string
	}{
		{"plain", testkit.RandomBytes(60_000), plain},
		{"encrypted", jwe.EncryptRequest(mustKey(t, secretOf("k-c1")), jwe.Protected{Kid: "k-c1"}, []byte(`{"file":"`+strings.Repeat("QUJD", 15_000)+`"}`)), encHeaders(token)},
	} {
		resp := send(refused.body, -1, refused.header)
		field := resp.Header.Get("RateLimit")
		_, rest, _ := strings.Cut(field, `"upload-bytes";r=`)
		r, _, _ := strings.Cut(rest, ";")
		n, err := strconv.ParseInt(r, 10, 64)
		if resp.StatusCode != http.StatusTooManyRequests || err != nil || n > 40_000 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s, past the quota: %d, RateLimit %q, Retry-After %q", refused.name, resp.StatusCode, field, resp.Header.Get("Retry-After"))
		}
		if e.up.count() != 1 {
			t.Fatalf("%s, past the quota: it reached the upstream", refused.name)
		}
		left = n
	}
	if resp := send(make([]byte, left+1), left+1, plain); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a declared upload of a byte more than the %d left: %d", left, resp.StatusCode)
	}
	t.Logf("%d bytes left after the refusals", left)
	if left == 0 {
		return
	}
	if resp := send(make([]byte, left), left, plain); resp.StatusCode != http.StatusOK || e.up.count() != 2 {
		t.Fatalf("a declared upload of the %d left: %d", left, resp.StatusCode)
	}
}
