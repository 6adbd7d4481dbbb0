package edge

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
)

// failover sends each request of the edge's own clients of the backends
// (the key plane's look-ups and change feed, the JWKS, the edge's reports)
// to the backend that answered last, and on to the next of them when one
// does not answer or answers 5xx: every backend serves the same data from
// the shared database, and these requests are reads (GET) or a report
// (POST) that the backend may take twice, as it keeps the latest of each
// use, so any may answer. It is
// hand-written because it is a dozen lines over http.RoundTripper; the
// API's traffic is balanced by Caddy's reverse_proxy, not by this.
type failover struct {
	next  http.RoundTripper
	bases []*url.URL // each backend's internal listener: scheme and host
	good  atomic.Int32
}

// newFailover returns a round tripper over next that fails over between
// the backends at bases, which must be absolute URLs.
func newFailover(next http.RoundTripper, bases []string) (*failover, error) {
	f := &failover{next: next}
	for _, b := range bases {
		u, err := url.Parse(b)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("%q is not a backend's URL", b)
		}
		f.bases = append(f.bases, u)
	}
	if len(f.bases) == 0 {
		return nil, fmt.Errorf("no backend")
	}
	return f, nil
}

// base is the URL of the backend tried first, with path p.
func (f *failover) base(p string) string {
	return strings.TrimSuffix(f.bases[0].String(), "/") + p
}

// RoundTrip implements http.RoundTripper for requests without a body, or
// whose body GetBody gives again.
func (f *failover) RoundTrip(r *http.Request) (*http.Response, error) {
	first := int(f.good.Load())
	var err error
	for i := range f.bases {
		n := (first + i) % len(f.bases)
		req := r.Clone(r.Context())
		req.URL.Scheme, req.URL.Host, req.Host = f.bases[n].Scheme, f.bases[n].Host, ""
		if i > 0 && r.GetBody != nil {
			if req.Body, err = r.GetBody(); err != nil {
				return nil, err
			}
		}
		var resp *http.Response
		if resp, err = f.next.RoundTrip(req); err == nil && resp.StatusCode < 500 {
			f.good.Store(int32(n))
			return resp, nil
		}
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("%s answered %s", f.bases[n].Host, resp.Status)
		}
		if r.Context().Err() != nil {
			break
		}
	}
	return nil, err
}

// backendURLs are the URLs in bases once their placeholders are replaced:
// a placeholder may give several, space-separated.
func backendURLs(repl *caddy.Replacer, bases []string) []string {
	var urls []string
	for _, b := range bases {
		urls = append(urls, strings.Fields(repl.ReplaceAll(b, ""))...)
	}
	return urls
}

// backends returns the client of the backends whose internal listeners
// are at urls, over the hop's TLS, and the first one's URL with path p.
func (h *HopTLS) backends(repl *caddy.Replacer, what string, urls []string, p string) (string, *http.Client, error) {
	client, err := h.client(repl, what)
	if err != nil {
		return "", nil, err
	}
	if client == nil {
		client = &http.Client{Transport: http.DefaultTransport}
	}
	f, err := newFailover(client.Transport, urls)
	if err != nil {
		return "", nil, fmt.Errorf("hdc: %s: %w", what, err)
	}
	client.Transport = f
	return f.base(p), client, nil
}
