package delivery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestAnswerExcerpt: a sender that keeps bodies keeps the first KiB of
// the endpoint's answer, as valid UTF-8; one that does not keeps nothing.
func TestAnswerExcerpt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 1023) + "é" + strings.Repeat("b", 4000) // é straddles the cut
	for _, c := range []struct {
		name, body string
		keep       bool
		want       string
	}{
		{"kept", `{"ok":false}`, true, `{"ok":false}`},
		{"cut at a KiB", long, true, strings.Repeat("a", 1023) + "\uFFFD"},
		{"invalid UTF-8", "a\xffb", true, "a\uFFFDb"},
		{"not kept", `{"ok":false}`, false, ""},
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
			h := newHTTPSender(loopback, time.Second)
			h.keepBody = c.keep
			r := h.send(ctx, d.Subscription, m)
			if r.StatusCode != http.StatusServiceUnavailable || r.Body != c.want {
				t.Fatalf("result %d %q, want 503 %q", r.StatusCode, r.Body, c.want)
			}
		})
	}
}
