// Package hdcforward is the hdc_forward handler, the last of the edge's
// before reverse_proxy: only the headers the backend reads travel on, and
// a body of no declared length goes whole or not at all (forward.go); its
// Caddyfile directive is in caddyfile.go.
package hdcforward

import (
	"io"
	"net/http"
	"os"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/caddymodule/spool"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

func init() {
	caddy.RegisterModule(Forward{})
}

// Forward is the hdc_forward handler: it removes from the request every
// header the backend does not read (contract.Forwards), and every trailer,
// so that the hop carries, and reverse_proxy's debug log shows, the hop's
// own headers and the few the backend needs, never another field a client
// sent. It comes last before reverse_proxy, after hdc_auth and hdc_jwe
// have read what they need. A body of no declared length (HTTP/1.1
// chunked, HTTP/2 or 3 without content-length) that nothing read before,
// it reads whole before anything of it goes on (spoolBody): one that
// passes its client's quota (hdc_ratelimit counts it as it is read) or
// the route's limit (request_body's) is then refused whole, 429 or 413,
// and the backend never gets one cut short, which reverse_proxy would
// answer 502 and Caddy's passive health check count against the backend,
// so that one client's bodies could take it out for every other.
//
//	hdc_forward
type Forward struct{}

// CaddyModule returns the Caddy module information.
func (Forward) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.hdc_forward",
		New: func() caddy.Module { return new(Forward) },
	}
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (Forward) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	for name := range r.Header {
		if !contract.Forwards(r.URL.Path, name) {
			delete(r.Header, name)
		}
	}
	// The backend reads no trailer. Over HTTP/1.1 and HTTP/2 alike, the
	// trailers the client announced, and those it sends after the body,
	// are kept in r.Trailer, which the hop's transport would send on.
	r.Trailer = nil
	if r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody {
		sp, err := spoolBody(r)
		switch p := edge.ReadProblem(err); {
		case p == edge.ErrPassedQuota:
			return edge.ErrQuotaPassed // hdc_ratelimit answers
		case p != nil:
			problem.Write(w, p)
			return nil
		}
		defer sp.Close()
	}
	return next.ServeHTTP(w, r)
}

// spoolBody reads the rest of r's body into a spool, past 2 MiB an
// unlinked temporary file, and makes it r's body, of its length: the
// backend gets the whole body, or nothing of it. The spool is the
// caller's to close once the request is served.
func spoolBody(r *http.Request) (*spool.Spool, error) {
	sp := spool.New(spool.DefaultThreshold, os.TempDir(), 0)
	if _, err := io.Copy(sp, r.Body); err != nil {
		sp.Close()
		return nil, err
	}
	if mem, ok := sp.InMemory(); ok {
		r.Body = spool.NewPlainBody(mem, sp.TakeMemory())
	} else {
		r.Body = io.NopCloser(io.NewSectionReader(sp, 0, sp.Size()))
	}
	r.ContentLength, r.TransferEncoding, r.GetBody = sp.Size(), nil, nil
	return sp, nil
}

// Interface guards
var (
	_ caddyhttp.MiddlewareHandler = (*Forward)(nil)
	_ caddyfile.Unmarshaler       = (*Forward)(nil)
)
