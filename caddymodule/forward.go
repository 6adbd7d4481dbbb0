package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

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
// have read what they need. An upload body that hdc_ratelimit counts as it
// is read, and that nothing read before, it reads whole before anything of
// it goes on (meteredBody.spool): a body that passes its client's quota is
// then refused whole, and the backend never gets one cut short, which it
// would answer as a failure and Caddy's passive health check count
// against it.
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
	if body, ok := r.Body.(*meteredBody); ok {
		sp, err := body.spool(r)
		switch p := readProblem(err, 0); {
		case p == errPassedQuota:
			return errQuotaPassed // hdc_ratelimit answers
		case p != nil:
			problem.Write(w, p)
			return nil
		}
		defer sp.Close()
	}
	return next.ServeHTTP(w, r)
}

// Interface guards
var (
	_ caddyhttp.MiddlewareHandler = (*Forward)(nil)
	_ caddyfile.Unmarshaler       = (*Forward)(nil)
)
