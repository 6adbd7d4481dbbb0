package delivery

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// userAgent identifies our deliveries to subscribers.
const userAgent = "HealthDataConnect-Webhooks/1"

// maxDrain is how much of an answer's body is read (and discarded) so the
// connection can be reused; a longer body closes it.
const maxDrain = 64 << 10

// httpSender POSTs messages to HTTP(S) endpoints.
//
// Every connection it opens goes through an SSRF guard (webhook.NewGuard)
// that checks the address actually dialled, after DNS resolution, so a
// hostname resolving to (or rebinding to) an internal address is refused
// as an IP literal is, unless an operator allowed the prefix. It
// never uses an HTTP proxy (the guard would then only see the proxy) and
// never follows a redirect (the answer is the result).
type httpSender struct {
	client *http.Client
	// keepBody: the result keeps the first KiB of the answer's body.
	keepBody bool
}

// newHTTPSender returns an httpSender whose guard lets allow through and
// that gives up connecting, or the TLS handshake, after connect.
func newHTTPSender(allow []netip.Prefix, connect time.Duration) *httpSender {
	guard := webhook.NewGuard(allow)
	dialer := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second, Control: guard.Safe}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    connect,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &httpSender{client: &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// send implements sender: 2xx is delivered, 410 is gone, any other answer
// (3xx included: redirects are not followed) or failure is retried.
func (h *httpSender) send(ctx context.Context, sub store.Subscription, m Message) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Endpoint, bytes.NewReader(m.Body))
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return Result{Outcome: OutcomeInvalidEndpoint, Permanent: true, Err: redact(err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	for k, v := range m.Headers() {
		req.Header.Set(k, v)
	}
	res, err := h.client.Do(req)
	if err != nil {
		return failure(err)
	}
	r := Result{Outcome: httpOutcome(res.StatusCode), StatusCode: res.StatusCode, Body: h.excerpt(res.Body)}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxDrain))
	res.Body.Close()
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		r.Outcome, r.Delivered = OutcomeDelivered, true
	case res.StatusCode == http.StatusGone:
		r.Gone = true
	default:
		r.RetryAfter = RetryAfter(res.Header.Get("Retry-After"), time.Now())
	}
	return r
}

// excerpt reads the start of an answer's body for the delivery log (at
// most store.MaxResponseBody bytes, as valid UTF-8), or nothing unless the
// sender keeps bodies.
func (h *httpSender) excerpt(body io.Reader) string {
	if !h.keepBody {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(body, store.MaxResponseBody))
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// maxRetryAfter bounds a parsed Retry-After before the schedule caps it,
// so that the arithmetic cannot overflow.
const maxRetryAfter = 365 * 24 * time.Hour

// RetryAfter parses a Retry-After header (RFC 9110: delay-seconds or an
// HTTP-date) at now. It returns 0 for an absent, malformed or past value,
// and never more than a year.
func RetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	switch n, err := strconv.ParseUint(v, 10, 64); {
	case err == nil:
		return time.Duration(min(n, uint64(maxRetryAfter/time.Second))) * time.Second
	case errors.Is(err, strconv.ErrRange):
		return maxRetryAfter
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return min(max(t.Sub(now), 0), maxRetryAfter)
}
