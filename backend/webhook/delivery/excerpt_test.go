package delivery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/webhook"
)

// TestAnswerExcerpt: a sender that keeps bodies keeps the first KiB of
// the answer of an endpoint at a public address, as valid UTF-8 (here
// loopback stands for one); of an endpoint that only an allowance admits,
// as the guard sees loopback, it keeps nothing, nor does a sender that
// keeps no bodies.
func TestAnswerExcerpt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 1023) + "é" + strings.Repeat("b", 4000) // é straddles the cut
	asPublic := func(a netip.Addr) bool { return a.IsLoopback() }
	for _, c := range []struct {
		name, body string
		keep       bool
		public     func(netip.Addr) bool // nil: the guard's
		want       string
	}{
		{"kept", `{"ok":false}`, true, asPublic, `{"ok":false}`},
		{"cut at a KiB", long, true, asPublic, strings.Repeat("a", 1023) + "\uFFFD"},
		{"invalid UTF-8", "a\xffb", true, asPublic, "a\uFFFDb"},
		{"not kept", `{"ok":false}`, false, asPublic, ""},
		{"admitted by the allow-list alone", `# HELP an internal service's metrics`, true, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			d := testDelivery("")
			d.Subscription.Endpoint = srv.URL
			m, err := NewMessage(d, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			h := newHTTPSender(webhook.NewGuard(webhook.GuardConfig{Allow: loopback}), time.Second)
			h.keepBody = c.keep
			if c.public != nil {
				h.public = c.public
			}
			r := h.send(ctx, d.Subscription, m)
			if r.StatusCode != http.StatusServiceUnavailable || r.Body != c.want {
				t.Fatalf("result %d %q, want 503 %q", r.StatusCode, r.Body, c.want)
			}
		})
	}
}
