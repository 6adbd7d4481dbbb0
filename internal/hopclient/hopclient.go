// Package hopclient is the client side of the hop to the backends'
// internal listeners: an http.RoundTripper over a fleet's backends, any of
// which answers the same (they share the database), that sends each
// request to the backend that answered last and on to the next when it
// fails, as far as the request may be sent again. The edge's own requests
// to the backends (the key plane, its reports, the JWKS) and hdc events
// publish go through it.
//
// A request moves on at once when nothing of it was received: the
// connection was refused or did not open within the attempt's deadline,
// or the backend's TLS handshake refused the client. After a failure that
// may have come once the backend received it (a connection lost, no
// answer within the deadline, a 5xx answer), it moves on only when it is
// safe to send again: a GET, HEAD or OPTIONS, a request that carries an
// Idempotency-Key, or one its caller marked repeatable (Repeatable). An
// answer the caller's Config says was not served (Unserved) moves any
// request on.
//
// It is hand-written over http.RoundTripper: Caddy's load balancing lives
// inside reverse_proxy and serves only the requests it proxies, and the
// API's requests are balanced by Caddy, not by this.
package hopclient

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/health-data-connect/hdc/internal/redact"
)

// Config is how a Transport tries the backends.
type Config struct {
	// Attempt bounds each attempt's connecting and the wait for the
	// answer's first byte, beside the request's context; 0 bounds
	// neither, for requests the backend holds on purpose (a long poll).
	Attempt time.Duration
	// Unserved, when set, reports whether an answer of a 5xx status says
	// that the backend did nothing with the request, so that a request
	// not safe to send again moves on too (hdc events publish: a 500,
	// its transaction undone, or a 503, not serving).
	Unserved func(status int) bool
	// Skipped, when set, is told of each backend a request moved on
	// from, and why.
	Skipped func(backend string, err error)
}

// Transport sends requests over next to the backends' internal
// listeners, failing over between them. It is safe for concurrent use.
type Transport struct {
	next     http.RoundTripper
	backends []*url.URL // each backend's internal listener: scheme and host
	cfg      Config
	last     atomic.Int32 // the backend that answered last
}

// New returns a Transport over next that fails over between the backends
// at urls, which Check accepts.
func New(next http.RoundTripper, urls []string, cfg Config) (*Transport, error) {
	backends, err := parse(urls)
	if err != nil {
		return nil, err
	}
	return &Transport{next: next, backends: backends, cfg: cfg}, nil
}

// Check returns an error unless urls name one backend at least, each by
// an http or https URL with a host (a user, a path or a query in it is
// not used): a caller that has more to check before New, as a
// command's other flags, checks its backends first. A URL refused is
// named by its place in urls, and as redact.URL prints it.
func Check(urls []string) error {
	_, err := parse(urls)
	return err
}

// parse returns the scheme and host of each of urls, as Check checks
// them.
func parse(urls []string) ([]*url.URL, error) {
	var backends []*url.URL
	for i, b := range urls {
		u, err := url.Parse(b)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("listener %d, %s, is not a backend's URL: an http or https URL with a host", i+1, redact.URL(b))
		}
		backends = append(backends, &url.URL{Scheme: u.Scheme, Host: u.Host})
	}
	if len(backends) == 0 {
		return nil, fmt.Errorf("no backend")
	}
	return backends, nil
}

// URL is the URL of path, empty or absolute, at the backend tried first:
// a request to it goes to whichever backend each attempt tries.
func (t *Transport) URL(path string) string {
	u := *t.backends[0]
	u.Path = path
	return u.String()
}

// RoundTrip implements http.RoundTripper. A request with a body is sent
// again only when GetBody gives it again. When no backend answered, the
// error is an *Unanswered naming each backend tried and its failure; a
// *MayHaveArrived when the request may have been received and was not
// safe to send again.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	first := int(t.last.Load())
	tried := &Unanswered{}
	for i := range t.backends {
		n := (first + i) % len(t.backends)
		if i > 0 && r.Body != nil && r.GetBody == nil {
			return nil, fmt.Errorf("%w; its body cannot be sent again", tried)
		}
		resp, moveOn, err := t.attempt(r, n, i > 0)
		if !moveOn {
			if err == nil && resp.StatusCode < 500 {
				t.last.Store(int32(n))
			}
			return resp, err
		}
		tried.Tried = append(tried.Tried, err)
		if r.Context().Err() != nil {
			break
		}
		if i < len(t.backends)-1 && t.cfg.Skipped != nil {
			t.cfg.Skipped(name(t.backends[n]), err)
		}
	}
	return nil, tried
}

// Unanswered is the error of a request that no backend answered: each
// backend's failure, in the order they were tried, each naming its
// backend.
type Unanswered struct {
	Tried []error
}

func (e *Unanswered) Error() string {
	msgs := make([]string, len(e.Tried))
	for i, err := range e.Tried {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns each backend's failure.
func (e *Unanswered) Unwrap() []error { return e.Tried }

// NothingSent reports whether no backend received anything of the
// request: each refused the connection, or none opened in time.
func (e *Unanswered) NothingSent() bool {
	for _, err := range e.Tried {
		var a *attemptError
		if !errors.As(err, &a) || a.sent {
			return false
		}
	}
	return len(e.Tried) > 0
}

// name is how the errors name a backend: its scheme and host.
func name(u *url.URL) string { return u.Scheme + "://" + u.Host }
