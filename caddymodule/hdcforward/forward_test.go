package hdcforward

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// quotaBody is a body hdc_ratelimit meters, as the handlers after it see
// it: its reads fail with edge.ErrQuotaPassed, and give nothing, once they
// would pass quota bytes.
type quotaBody struct {
	io.Reader
	quota, read int64
}

func (b *quotaBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if b.read += int64(n); b.read > b.quota {
		return 0, edge.ErrQuotaPassed
	}
	return n, err
}

func (b *quotaBody) Close() error { return nil }

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
			body := testkit.RandomBytes(tt.size)
			r := httptest.NewRequest("POST", "/mr/api/v2/docs", nil)
			w := httptest.NewRecorder()
			r.Body = http.MaxBytesReader(w, &quotaBody{Reader: bytes.NewReader(body), quota: tt.quota}, tt.limit)
			r.ContentLength = -1
			var got []byte
			var length int64
			next := caddyhttp.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) error {
				length = r.ContentLength
				var err error
				got, err = io.ReadAll(r.Body)
				r.Body.Close()
				return err
			})
			err := Forward{}.ServeHTTP(w, r, next)
			if tt.limit < int64(tt.size) {
				if err != nil || w.Code != http.StatusRequestEntityTooLarge || got != nil || !strings.Contains(w.Body.String(), `"code":"payload_too_large"`) {
					t.Fatalf("a body past the route's limit: %v, %d %s, and the next handler read %d bytes", err, w.Code, w.Body, len(got))
				}
				return
			}
			if tt.passed {
				if !errors.Is(err, edge.ErrQuotaPassed) || got != nil {
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
