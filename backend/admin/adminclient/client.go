// Package adminclient is a client of the Admin API: it implements
// adminapi.API, each operation a request over the hop's TLS with a
// person's certificate that the operation's route in the table
// (adminapi.Routes) describes. hdc's remote mode and the console call it;
// hdc's direct mode calls the service (admin.Service) in its place, so
// that a command prints the same either way.
package adminclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/hopclient"
	"github.com/health-data-connect/hdc/internal/problem"
)

// maxAnswer bounds an answer's body: a page of the largest list.
const maxAnswer = 16 << 20

// Client speaks to the Admin API of a fleet's backends, any of which
// answers the same: each request goes to the backend that answered last
// and on to the next when one fails (hopclient). It is safe for
// concurrent use.
type Client struct {
	hop  *hopclient.Transport
	http *http.Client
}

// DefaultAttempt bounds each attempt on a backend unless told otherwise:
// its connection and the first byte of its answer.
const DefaultAttempt = 2 * time.Second

// verifyAttempt bounds an attempt of VerifyAudit, whose answer begins only
// once the backend has read every trail it verifies.
const verifyAttempt = 5 * time.Minute

// New returns a client of the Admin API at urls (the internal listeners of
// a fleet's backends, each https://host:port, tried in order), over cfg:
// the hop's authority as the root and a person's certificate
// (pki.ClientTLS). Each attempt on a backend is bound by attempt
// (DefaultAttempt when 0): one that refuses the connection, or gives no
// answer within it, costs that and no more, and the request moves on to
// the next backend; a change is sent again only under its
// Idempotency-Key, which every change carries.
func New(urls []string, cfg *tls.Config, attempt time.Duration) (*Client, error) {
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("each of the Admin API's URLs must be https://host:port (a backend's internal listener), not %q", redactURL(s))
		}
	}
	if attempt <= 0 {
		attempt = DefaultAttempt
	}
	next := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	hop, err := hopclient.New(next, urls, hopclient.Config{Attempt: attempt})
	if err != nil {
		return nil, fmt.Errorf("the Admin API: %w", err)
	}
	return &Client{hop: hop, http: &http.Client{Transport: hop, Timeout: 5 * time.Minute}}, nil
}

// SplitURLs splits a list of the Admin API's URLs as --admin and
// HDC_ADMIN_URL take it: separated by spaces or commas.
func SplitURLs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// redactURL returns s without what may be a credential.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(not a URL)"
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}

// Close releases the client's connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// idempotencyKey is the context key of WithIdempotencyKey.
type idempotencyKey struct{}

// WithIdempotencyKey returns ctx under which a change that takes an
// Idempotency-Key is sent with key in place of a fresh one, so that a
// caller that may ask for the same change twice (the console, a form sent
// twice) has it made once: the second is answered as the first was. key
// is the caller's own, 1 to 255 visible ASCII characters; the API keeps a
// key's answer for a day, per person.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, key)
}

// call sends the operation op: the method and path of its route
// (adminapi.Lookup), params in the path's wildcards, query q and body
// (JSON, none when nil), a change under the Idempotency-Key its route
// takes (the caller's, WithIdempotencyKey, or a fresh one); it reads the
// answer into a new T. An answer that is a problem is returned as a
// *problem.Problem.
func call[T any](ctx context.Context, c *Client, op string, q url.Values, body any, params ...string) (T, error) {
	var out T
	req, err := c.build(op, q, body, params)
	if err != nil {
		return out, err
	}
	resp, err := c.do(ctx, req)
	if err != nil {
		return out, err
	}
	return out, read(resp, &out)
}

// stream sends the operation op with query q and copies its answer's body
// to w as it comes.
func (c *Client) stream(ctx context.Context, op string, q url.Values, w io.Writer) error {
	req, err := c.build(op, q, nil, nil)
	if err != nil {
		return err
	}
	resp, err := c.do(ctx, req)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		return read(resp, nil)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("the Admin API's answer: %w", err)
	}
	return nil
}

// request is what one operation sends, whatever the try.
type request struct {
	route   adminapi.Route
	url     string
	payload []byte // nil for no body
}

// build returns the request of the operation op.
func (c *Client) build(op string, q url.Values, body any, params []string) (request, error) {
	rt, ok := adminapi.Lookup(op)
	if !ok {
		return request{}, fmt.Errorf("adminclient: no operation %q", op)
	}
	path, err := rt.Expand(params...)
	if err != nil {
		return request{}, err
	}
	u := c.hop.URL("") + path // path is escaped already
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var payload []byte
	if body != nil {
		if payload, err = json.Marshal(body); err != nil {
			return request{}, err
		}
	}
	return request{route: rt, url: u, payload: payload}, nil
}

// do sends req, under an Idempotency-Key when its route takes one, and
// returns the answer. The hop's client tries each backend once; while
// none received anything (every one refused the connection: starting,
// or restarting) or a read or a change under its key may go again, the
// whole round is tried again until patience has passed since the first.
func (c *Client) do(ctx context.Context, req request) (*http.Response, error) {
	key := ""
	if req.route.Idempotent {
		if key, _ = ctx.Value(idempotencyKey{}).(string); key == "" {
			key = uuid.NewString()
		}
	}
	if req.route.Name == "VerifyAudit" {
		ctx = hopclient.WithAttempt(ctx, verifyAttempt)
	}
	start := time.Now()
	for {
		resp, err := c.send(ctx, req, key)
		if err == nil {
			return resp, nil
		}
		var un *hopclient.Unanswered
		if !errors.As(err, &un) {
			return nil, fmt.Errorf("the Admin API: %w", err)
		}
		if ctx.Err() != nil || time.Since(start) >= patience || pause(ctx, retryPause) != nil {
			return nil, fmt.Errorf("no backend of the Admin API served the request: %w", un)
		}
	}
}

// While no backend answers (each is starting, or restarting on a fleet),
// a request is tried again every retryPause until patience has passed:
// within the 3 s in which an operator is told that none answers.
const (
	patience   = 2 * time.Second
	retryPause = 250 * time.Millisecond
)

// pause waits d, or less when ctx is done, and returns ctx's error.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send sends req once, with key as its Idempotency-Key unless empty.
func (c *Client) send(ctx context.Context, req request, key string) (*http.Response, error) {
	r, err := http.NewRequestWithContext(ctx, req.route.Method, req.url, bytes.NewReader(req.payload))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Accept", "application/json")
	if req.payload != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		r.Header.Set(contract.HeaderIdempotencyKey, key)
	}
	return c.http.Do(r)
}

// extended is an answer that some problems carry extension members of
// (RFC 9457 §3.2): read decodes such a problem into it too.
type extended interface{ extends(code string) bool }

// read reads resp's answer into out, or its problem as the error (and
// into out too when out is extended by its code).
func read(resp *http.Response, out any) error {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	switch {
	case err != nil:
		return err
	case len(b) > maxAnswer:
		return errors.New("the Admin API's answer is too large")
	case resp.StatusCode >= 400:
		var p problem.Problem
		if json.Unmarshal(b, &p) != nil || p.Code == "" {
			return fmt.Errorf("the Admin API answered %s", resp.Status)
		}
		if x, ok := out.(extended); ok && x.extends(p.Code) {
			if err := json.Unmarshal(b, out); err != nil {
				return err
			}
		}
		return &p
	case out == nil:
		return nil
	}
	return json.Unmarshal(b, out)
}
