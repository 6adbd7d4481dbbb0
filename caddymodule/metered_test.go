package caddymodule

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestUploadQuotaMetered: the reference Caddyfile in front of a recording
// upstream, with a daily upload quota of 100 kB counted in memory, and
// uploads that declare no length (HTTP/2 without content-length). One that
// fits reaches the upstream whole, with its length; one that passes what
// is left, plain or encrypted, is answered 429 quota_exceeded, and nothing
// of it reaches the upstream. The bytes the edge read stay counted and the
// rest of what it reserved is given back: a declared upload of exactly
// what the refusal says is left passes, one byte more is refused.
func TestUploadQuotaMetered(t *testing.T) {
	e := startEdge(t, edgetest.Keys, map[string]string{"HDC_RATELIMIT_REDIS": "", "HDC_LOG_LEVEL": "error",
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
		{"encrypted", jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c1")), jwe.Protected{Kid: "k-c1"}, []byte(`{"file":"`+strings.Repeat("QUJD", 15_000)+`"}`)), encHeaders(token)},
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
