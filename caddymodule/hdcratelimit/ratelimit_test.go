package hdcratelimit

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/caddymodule/ratelimit"
	"github.com/health-data-connect/hdc/internal/contract"
)

// newTestRateLimit returns an hdc_ratelimit handler of class over an app
// of cfg counting in memory.
func newTestRateLimit(t testing.TB, class contract.RouteClass, cfg edge.RateLimitConfig) *RateLimit {
	t.Helper()
	app := &edge.App{Keys: edge.KeysConfig{Registry: edgetest.Registry(t, nil), Keeper: edgetest.KeeperURL}, RateLimits: cfg}
	edgetest.Provision(t, app)
	return &RateLimit{Class: class, app: app, engine: app.RateLimiter(), logger: zap.NewNop(),
		logged: expirable.NewLRU[string, struct{}](10, nil, time.Minute)}
}

// asClient returns r from client's context, as hdc_auth names it ("" for
// none).
func asClient(r *http.Request, client string) *http.Request {
	r = r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{}))
	if client != "" {
		edge.SetClientID(r, client)
	}
	return r
}

// serveLimited runs h for r as client (none: ""), from the address ip.
func serveLimited(t testing.TB, h *RateLimit, r *http.Request, client, ip string) *httptest.ResponseRecorder {
	t.Helper()
	r = asClient(r, client)
	r.Header.Set(contract.HeaderClientIP, ip)
	w := httptest.NewRecorder()
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) error { w.WriteHeader(http.StatusOK); return nil })
	if err := h.ServeHTTP(w, r, next); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestRateLimitHandler(t *testing.T) {
	t.Parallel()
	rates := map[contract.RouteClass]contract.Rate{contract.ClassWrites: {PerSecond: 1, Burst: 2}, contract.ClassLogin: {PerSecond: 1, Burst: 1}}
	tests := []struct {
		name     string
		class    contract.RouteClass
		clients  []string // one request each, in order
		ips      []string
		want     []int
		fields   string // RateLimit of the last answer
		retry    string // its Retry-After
		noFields bool
	}{
		{"burst then refused", contract.ClassWrites, []string{"a", "a", "a"}, []string{"1", "1", "1"}, []int{200, 200, 429}, `"writes";r=0;t=2`, "1", false},
		{"clients apart", contract.ClassWrites, []string{"a", "a", "b"}, []string{"1", "1", "1"}, []int{200, 200, 200}, `"writes";r=1;t=1`, "", false},
		{"login per source", contract.ClassLogin, []string{"", "", ""}, []string{"1", "2", "1"}, []int{200, 200, 429}, `"login";r=0;t=1`, "1", false},
		{"refresh per client and source", contract.ClassLogin, []string{"a", "b"}, []string{"1", "1"}, []int{200, 429}, `"login";r=0;t=1`, "1", false},
		{"class without a limit", contract.ClassReads, []string{"a", "a", "a"}, []string{"1", "1", "1"}, []int{200, 200, 200}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newTestRateLimit(t, tt.class, edge.RateLimitConfig{Rates: rates})
			var w *httptest.ResponseRecorder
			for i, c := range tt.clients {
				w = serveLimited(t, h, httptest.NewRequest("POST", "/x", nil), c, tt.ips[i])
				if w.Code != tt.want[i] {
					t.Fatalf("request %d: %d, want %d: %s", i, w.Code, tt.want[i], w.Body)
				}
			}
			if got := w.Header().Get("RateLimit"); got != tt.fields {
				t.Fatalf("RateLimit %q, want %q", got, tt.fields)
			}
			if got := w.Header().Get("Retry-After"); got != tt.retry {
				t.Fatalf("Retry-After %q, want %q", got, tt.retry)
			}
			if w.Code == http.StatusTooManyRequests && !strings.Contains(w.Body.String(), `"code":"rate_limited"`) {
				t.Fatalf("body %s", w.Body)
			}
		})
	}
}

// TestUploadQuotaHandler: with a quota of 1000 bytes, a declared length is
// counted before the body is read, a body of no declared length as the
// handler below reads it; the one that would pass the quota is refused
// 429 quota_exceeded, and only the bytes a refused body of no length had
// read stay counted (here none: its first read passes the quota).
func TestUploadQuotaHandler(t *testing.T) {
	t.Parallel()
	h := newTestRateLimit(t, contract.ClassUploads, edge.RateLimitConfig{UploadBytesPerDay: 1000})
	for i, tc := range []struct {
		length int64 // -1: not declared
		body   int
		want   int
		left   string // the RateLimit field
	}{
		{600, 600, 200, `"upload-bytes";r=400;`},
		{500, 500, 429, `"upload-bytes";r=400;`},
		{-1, 300, 200, `"upload-bytes";r=400;`}, // what was left when it began
		{-1, 200, 429, `"upload-bytes";r=100;`}, // read at once, past the 100 left
		{100, 100, 200, `"upload-bytes";r=0;`},
		{-1, 1, 429, `"upload-bytes";r=0;`}, // nothing left: refused before a byte is read
		{1, 1, 429, `"upload-bytes";r=0;`},
	} {
		r := httptest.NewRequest("POST", "/up", strings.NewReader(strings.Repeat("x", tc.body)))
		r.ContentLength = tc.length
		w := serveReading(t, h, r, "c")
		if w.Code != tc.want || !strings.HasPrefix(w.Header().Get("RateLimit"), tc.left) {
			t.Fatalf("upload %d of %d bytes (declared %d): %d %q, want %d %q: %s", i, tc.body, tc.length, w.Code,
				w.Header().Get("RateLimit"), tc.want, tc.left, w.Body)
		}
		if w.Code == http.StatusTooManyRequests && (!strings.Contains(w.Body.String(), `"code":"quota_exceeded"`) ||
			w.Header().Get("Connection") != "close" || w.Header().Get("Retry-After") == "") {
			t.Fatalf("upload %d: %v %s", i, w.Header(), w.Body)
		}
	}
}

// serveReading runs h for r as client, from 127.0.0.1, in front of a
// handler that reads the body whole, and fails on a read that fails, as
// hdc_jwe and hdc_forward do.
func serveReading(t testing.TB, h *RateLimit, r *http.Request, client string) *httptest.ResponseRecorder {
	t.Helper()
	r = asClient(r, client)
	r.Header.Set(contract.HeaderClientIP, "127.0.0.1")
	w := httptest.NewRecorder()
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if _, err := io.ReadAll(r.Body); err != nil {
			return err
		}
		w.WriteHeader(http.StatusOK)
		return nil
	})
	if err := h.ServeHTTP(w, r, next); err != nil {
		t.Fatal(err)
	}
	return w
}

// BenchmarkRateLimitHandler measures hdc_ratelimit's check alone for one
// client's request under its limit, in memory and in Redis on loopback
// (HDC_TEST_REDIS_URL): compare with BenchmarkRateLimitCost/none's
// cpu-ns/op, the edge's CPU for a whole request of 1 KiB.
//
//	go test -run '^$' -bench RateLimitHandler ./caddymodule/hdcratelimit/ &&
//	go test -run '^$' -bench RateLimitCost/none ./caddymodule/
func BenchmarkRateLimitHandler(b *testing.B) {
	high := map[contract.RouteClass]contract.Rate{contract.ClassWrites: {PerSecond: 1e9, Burst: 1e9}}
	for _, engine := range []string{"memory", "redis"} {
		b.Run(engine, func(b *testing.B) {
			h := newTestRateLimit(b, contract.ClassWrites, edge.RateLimitConfig{Rates: high})
			if engine == "redis" {
				url := os.Getenv("HDC_TEST_REDIS_URL")
				if url == "" {
					b.Skip("HDC_TEST_REDIS_URL is not set")
				}
				opt, err := ratelimit.RedisConfig{URL: url, PasswordFile: os.Getenv("HDC_TEST_REDIS_PASSWORD_FILE"),
					CAFile: os.Getenv("HDC_TEST_REDIS_CA")}.Options()
				if err != nil {
					b.Fatal(err)
				}
				client := redis.NewClient(opt)
				b.Cleanup(func() { client.Close() })
				h.engine = ratelimit.NewRedis(client)
			}
			r := httptest.NewRequest("POST", "/x", nil)
			b.ReportAllocs()
			for b.Loop() {
				if w := serveLimited(b, h, r, "c1", "127.0.0.1"); w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
