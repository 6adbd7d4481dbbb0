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
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// maxAnswer bounds an answer's body: a page of the largest list.
const maxAnswer = 16 << 20

// attempts is how many times a change under an Idempotency-Key is sent
// when the connection fails before an answer: the key makes it once.
const attempts = 3

// Client speaks to one backend's Admin API. It is safe for concurrent use.
type Client struct {
	base *url.URL
	http *http.Client
}

// New returns a client of the Admin API at baseURL (the backend's internal
// listener, https://host:port), over cfg: the hop's authority as the root
// and a person's certificate (pki.ClientTLS).
func New(baseURL string, cfg *tls.Config) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the Admin API's URL must be https://host:port (the backend's internal listener), not %q", redactURL(baseURL))
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true, ResponseHeaderTimeout: time.Minute}
	return &Client{base: u, http: &http.Client{Transport: tr, Timeout: 5 * time.Minute}}, nil
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
		return fmt.Errorf("the Admin API at %s: the answer: %w", c.base.Host, err)
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
	u := c.base.String() + path
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
// returns the answer. A request whose connection is refused is sent again
// for dialPatience (nothing reached the backend); one whose connection
// failed otherwise, only under its key, up to attempts times.
func (c *Client) do(ctx context.Context, req request) (*http.Response, error) {
	key := ""
	if req.route.Idempotent {
		if key, _ = ctx.Value(idempotencyKey{}).(string); key == "" {
			key = uuid.NewString()
		}
	}
	var err error
	deadline := time.Now().Add(dialPatience)
	for tries := 0; tries < attempts; {
		var resp *http.Response
		if resp, err = c.send(ctx, req, key); err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			break
		}
		if notSent(err) && time.Now().Before(deadline) {
			// Nothing reached the backend: it is starting or
			// restarting. Any request may go again.
			if pause(ctx, dialPause) != nil {
				break
			}
			continue
		}
		if tries++; key == "" {
			break
		}
	}
	return nil, fmt.Errorf("the Admin API at %s: %w", c.base.Host, err)
}

// While a backend refuses connections (it is starting, or restarting on
// a fleet), a request is sent again every dialPause for dialPatience.
const (
	dialPatience = 15 * time.Second
	dialPause    = 250 * time.Millisecond
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

// notSent reports whether err is a failure to connect: the request did
// not leave.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
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
