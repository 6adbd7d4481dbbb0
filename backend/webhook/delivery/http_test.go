package delivery

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/testkit"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   string
		want time.Duration
	}{
		{"absent", "", 0},
		{"zero seconds", "0", 0},
		{"seconds", "120", 2 * time.Minute},
		{"seconds with spaces", " 7 ", 7 * time.Second},
		{"negative seconds", "-5", 0},
		{"fractional seconds", "1.5", 0},
		{"not a number or date", "soon", 0},
		{"seconds above the cap", "99999999999", maxRetryAfter},
		{"seconds overflowing", "99999999999999999999999", maxRetryAfter},
		{"future date", "Sat, 14 Mar 2026 12:05:00 GMT", 5 * time.Minute},
		{"past date", "Sat, 14 Mar 2026 11:00:00 GMT", 0},
		{"far future date", "Sun, 14 Mar 2100 12:00:00 GMT", maxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryAfter(tt.in, now); got != tt.want {
				t.Errorf("RetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "120", "Sat, 14 Mar 2026 12:05:00 GMT", "Monday, 02-Jan-06 15:04:05 MST", "18446744073709551616"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if d := RetryAfter(s, now); d < 0 || d > maxRetryAfter {
			t.Fatalf("RetryAfter(%q) = %v", s, d)
		}
	})
}

// sendHTTP makes one attempt at endpoint through a sender allowing allow.
func sendHTTP(t *testing.T, allow []netip.Prefix, endpoint string) Result {
	t.Helper()
	d := testDelivery("")
	d.Subscription.Endpoint = endpoint
	m, err := NewMessage(d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	return newHTTPSender(webhook.NewGuard(webhook.GuardConfig{Allow: allow}), time.Second).send(ctx, d.Subscription, m)
}

// countingServer counts the requests (and connections) it gets on address
// (host:0 for any port) and answers with status, redirecting to location
// when set.
func countingServer(t *testing.T, address string, status int, location string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if location != "" {
			w.Header().Set("Location", location)
		}
		w.WriteHeader(status)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			hits.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestSSRFGuard: with no allow-list, endpoints on loopback, private,
// link-local and metadata addresses are refused before any connection, by
// IP literal or by a name that resolves to loopback, and a redirect is
// never followed.
func TestSSRFGuard(t *testing.T) {
	v4, v4hits := countingServer(t, "127.0.0.1:0", http.StatusNoContent, "")
	v6, v6hits := countingServer(t, "[::1]:0", http.StatusNoContent, "")
	port := strconv.Itoa(v4.Listener.Addr().(*net.TCPAddr).Port)
	v6port := strconv.Itoa(v6.Listener.Addr().(*net.TCPAddr).Port)
	for _, endpoint := range []string{
		v4.URL,
		"http://10.0.0.1/hook",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::1]:" + v6port + "/hook",
		"http://localhost:" + port + "/hook",
		"http://[::ffff:127.0.0.1]:" + port + "/hook",
		"http://0.0.0.0:" + port + "/hook",
		"http://100.64.0.1/hook",
		"http://192.168.1.1/hook",
		"http://[fd00::1]/hook",
		"http://[fe80::1]/hook",
	} {
		t.Run(endpoint, func(t *testing.T) {
			r := sendHTTP(t, nil, endpoint)
			if r.Outcome != OutcomeAddressRefused || !r.Permanent || r.Delivered {
				t.Errorf("%s: result %+v, want address_refused", endpoint, r)
			}
		})
	}
	if v4hits.Load() != 0 || v6hits.Load() != 0 {
		t.Fatalf("refused endpoints were connected to: %d on 127.0.0.1, %d on ::1", v4hits.Load(), v6hits.Load())
	}

	// The operator's allow-list lets exactly its prefixes through.
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	if r := sendHTTP(t, allow, v4.URL); !r.Delivered || r.StatusCode != http.StatusNoContent {
		t.Fatalf("allowed loopback endpoint: %+v", r)
	}
	if r := sendHTTP(t, allow, "http://[::1]:"+v6port+"/"); r.Outcome != OutcomeAddressRefused {
		t.Fatalf("::1 with only 127.0.0.1/32 allowed: %+v", r)
	}

	// A redirect, here from an allowed address to a refused one and to an
	// allowed one, is not followed: the 3xx is the answer, and retried.
	for _, target := range []string{"http://[::1]:" + v6port + "/", v4.URL + "/elsewhere"} {
		t.Run("redirect to "+target, func(t *testing.T) {
			before4, before6 := v4hits.Load(), v6hits.Load()
			redirector, _ := countingServer(t, "127.0.0.1:0", http.StatusFound, target)
			r := sendHTTP(t, allow, redirector.URL)
			if r.Delivered || r.Outcome != "http_302" || r.StatusCode != http.StatusFound || r.Permanent || r.Gone {
				t.Fatalf("redirect to %s: %+v", target, r)
			}
			if v4hits.Load() != before4 || v6hits.Load() != before6 {
				t.Fatalf("the redirect to %s was followed", target)
			}
		})
	}
}

func TestHTTPAnswers(t *testing.T) {
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	tests := []struct {
		name       string
		status     int
		retryAfter string
		want       Result
	}{
		{"200 delivered", 200, "", Result{Outcome: "delivered", StatusCode: 200, Delivered: true}},
		{"202 delivered", 202, "", Result{Outcome: "delivered", StatusCode: 202, Delivered: true}},
		{"301 not followed", 301, "", Result{Outcome: "http_301", StatusCode: 301}},
		{"400 failed", 400, "", Result{Outcome: "http_400", StatusCode: 400}},
		{"404 failed", 404, "", Result{Outcome: "http_404", StatusCode: 404}},
		{"410 gone", 410, "", Result{Outcome: "http_410", StatusCode: 410, Gone: true}},
		{"429 with Retry-After", 429, "30", Result{Outcome: "http_429", StatusCode: 429, RetryAfter: 30 * time.Second}},
		{"500 failed", 500, "", Result{Outcome: "http_500", StatusCode: 500}},
		{"503 with Retry-After", 503, "120", Result{Outcome: "http_503", StatusCode: 503, RetryAfter: 2 * time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte("ignored"))
			}))
			got := sendHTTP(t, allow, srv.URL)
			srv.Close()
			if got != tt.want {
				t.Errorf("status %d: %+v, want %+v", tt.status, got, tt.want)
			}
		})
	}
	// Failures without an answer, and an endpoint that is not HTTP.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/?token=secret-in-url"
	ln.Close()
	if r := sendHTTP(t, allow, closed); r.Outcome != OutcomeConnectionError || r.Permanent || strings.Contains(r.Err.Error(), "secret-in-url") {
		t.Errorf("closed port: %+v", r)
	}
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler()) // a certificate we do not trust
	defer tlsSrv.Close()
	if r := sendHTTP(t, allow, tlsSrv.URL); r.Outcome != OutcomeTLSError {
		t.Errorf("untrusted certificate: %+v", r)
	}
	if r := sendHTTP(t, allow, "ftp://127.0.0.1/x"); r.Outcome != OutcomeInvalidEndpoint || !r.Permanent {
		t.Errorf("ftp endpoint: %+v", r)
	}
}

// TestConnectTimeout: a subscriber that accepts the connection but never
// completes the TLS handshake is given up after the connect timeout, not
// the attempt's.
func TestConnectTimeout(t *testing.T) {
	d := testDelivery("")
	d.Subscription.Endpoint = "https://" + testkit.Silent(t) + "/hook"
	m, err := NewMessage(d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		done <- newHTTPSender(webhook.NewGuard(webhook.GuardConfig{Allow: loopback}), 100*time.Millisecond).send(ctx, d.Subscription, m)
	}()
	select {
	case r := <-done:
		if r.Delivered || r.Outcome != OutcomeTimeout {
			t.Fatalf("result %+v, want a timeout", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the handshake was waited for past the connect timeout")
	}
}
