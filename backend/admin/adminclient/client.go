// Package adminclient is a client of the Admin API (package admin): the
// same methods as admin.Service, each a request over the hop's TLS with a
// person's certificate. hdc's remote mode calls it where its direct mode
// calls the service, so that a command prints the same either way.
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

	"github.com/health-data-connect/hdc/backend/admin"
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
// key's answer for admin.IdempotencyTTL, per person.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, key)
}

// call sends method path (under admin.Prefix) with query q and body (JSON,
// none when nil), a change under its Idempotency-Key when idempotent (the
// caller's, WithIdempotencyKey, or a fresh one), and reads the answer into out (nil to ignore it). An answer that is a
// problem is returned as a *problem.Problem.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, body, out any, idempotent bool) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	key := ""
	if idempotent {
		if key, _ = ctx.Value(idempotencyKey{}).(string); key == "" {
			key = uuid.NewString()
		}
	}
	var err error
	deadline := time.Now().Add(dialPatience)
	for tries := 0; tries < attempts; {
		var resp *http.Response
		resp, err = c.send(ctx, method, path, q, payload, key)
		if err == nil {
			return read(resp, out)
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
	return fmt.Errorf("the Admin API at %s: %w", c.base.Host, err)
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

// send sends one request.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, payload []byte, key string) (*http.Response, error) {
	u := *c.base
	u.Path += admin.Prefix + path
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set(admin.HeaderIdempotencyKey, key)
	}
	return c.http.Do(req)
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

// get reads path with query q into a new T.
func get[T any](ctx context.Context, c *Client, path string, q url.Values) (T, error) {
	var out T
	err := c.call(ctx, http.MethodGet, path, q, nil, &out, false)
	return out, err
}

// post sends body to path and reads the answer into a new T.
func post[T any](ctx context.Context, c *Client, path string, body any, idempotent bool) (T, error) {
	var out T
	err := c.call(ctx, http.MethodPost, path, nil, body, &out, idempotent)
	return out, err
}

// del deletes path and reads the answer into a new T.
func del[T any](ctx context.Context, c *Client, path string) (T, error) {
	var out T
	err := c.call(ctx, http.MethodDelete, path, nil, nil, &out, false)
	return out, err
}
