package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
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
// Every connection it opens goes through the guard (webhook.Guard), which
// checks the address actually dialled, after DNS resolution, against the
// policy of the subscription's workspace: a hostname resolving to (or
// rebinding to) an internal address is refused as an IP literal is,
// unless an allowance or a grant of the workspace admits it, and a
// listener of the gateway is refused whatever admits it. A workspace with
// grants is sent on connections of its own, one per delivery, never kept:
// a connection another workspace's grant admitted is never reused for it,
// and a revoked grant admits no connection that outlived it. It never uses
// an HTTP proxy (the guard would then only see the proxy) and never
// follows a redirect (the answer is the result).
type httpSender struct {
	guard *webhook.Guard
	// shared sends for the workspaces without grants, its connections
	// kept and reused; private for those with grants.
	shared, private *http.Client
	// keepBody: the result keeps the first KiB of an answer from a public
	// address (public, the guard's Public); never of one only an allowance
	// or a grant admits, whose answer is no client's to read.
	keepBody bool
	public   func(netip.Addr) bool
}

// newHTTPSender returns an httpSender under guard that gives up
// connecting, or the TLS handshake, after connect.
func newHTTPSender(guard *webhook.Guard, connect time.Duration) *httpSender {
	h := &httpSender{guard: guard, public: guard.Public}
	shared := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer(connect, func(ctx context.Context) (webhook.Policy, error) { return guard.Policy(ctx, "") }),
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    connect,
		MaxResponseHeaderBytes: 64 << 10,
	}
	private := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer(connect, policyOf),
		DisableKeepAlives:      true,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1: no connection shared by requests
		TLSHandshakeTimeout:    connect,
		MaxResponseHeaderBytes: 64 << 10,
	}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h.shared = &http.Client{Transport: shared, CheckRedirect: noRedirect}
	h.private = &http.Client{Transport: private, CheckRedirect: noRedirect}
	return h
}

// dialer returns a DialContext that dials under the policy policy finds
// for the dial's context, within connect.
func dialer(connect time.Duration, policy func(context.Context) (webhook.Policy, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		p, err := policy(ctx)
		if err != nil {
			return nil, err
		}
		d := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second, Control: p.Control}
		return d.DialContext(ctx, network, addr)
	}
}

// policyKey is the context key of the policy a private dial is under.
type policyKey struct{}

// policyOf returns the policy the request of ctx is sent under.
func policyOf(ctx context.Context) (webhook.Policy, error) {
	p, ok := ctx.Value(policyKey{}).(webhook.Policy)
	if !ok {
		return webhook.Policy{}, errors.New("delivery: a private dial without its workspace's policy")
	}
	return p, nil
}

// send implements sender: 2xx is delivered, 410 is gone, any other answer
// (3xx included: redirects are not followed) or failure is retried. An
// attempt the copy of the grants refuses before any connection is made
// once more under the workspace's grants read afresh, when it has any: a
// grant made on another backend a moment before is in force at once
// (a revocation, within the copy's TTL).
func (h *httpSender) send(ctx context.Context, sub store.Subscription, m Message) Result {
	p, err := h.guard.Policy(ctx, sub.WorkspaceID)
	if err != nil {
		return Result{Outcome: OutcomeConnectionError, Err: err}
	}
	r := h.sendUnder(ctx, p, sub, m)
	if r.Outcome != OutcomeAddressRefused {
		return r
	}
	if fresh, err := h.guard.FreshPolicy(ctx, sub.WorkspaceID); err == nil && fresh.Granted() {
		return h.sendUnder(ctx, fresh, sub, m)
	}
	return r
}

// sendUnder makes the attempt under p.
func (h *httpSender) sendUnder(ctx context.Context, p webhook.Policy, sub store.Subscription, m Message) Result {
	client := h.shared
	if p.Granted() {
		client, ctx = h.private, context.WithValue(ctx, policyKey{}, p)
	}
	var remote net.Addr
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(c httptrace.GotConnInfo) { remote = c.Conn.RemoteAddr() }})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Endpoint, bytes.NewReader(m.Body))
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return Result{Outcome: OutcomeInvalidEndpoint, Permanent: true, Err: redact(err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	for k, v := range m.Headers() {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return failure(err)
	}
	r := Result{Outcome: httpOutcome(res.StatusCode), StatusCode: res.StatusCode}
	if h.keepBody && h.fromPublic(remote) {
		r.Body = excerpt(res.Body)
	}
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

// fromPublic reports whether the answer came from remote, a public
// address: only such an answer may be kept.
func (h *httpSender) fromPublic(remote net.Addr) bool {
	tcp, ok := remote.(*net.TCPAddr)
	return ok && h.public(tcp.AddrPort().Addr())
}

// excerpt reads the start of an answer's body for the delivery log: at
// most store.MaxResponseBody bytes, as valid UTF-8.
func excerpt(body io.Reader) string {
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
