package hdcforward

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("hdc_forward", parseCaddyfile)
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens: it takes
// no arguments.
func (*Forward) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() || d.NextBlock(0) {
		return d.Errf("hdc_forward takes no arguments")
	}
	return nil
}

// parseCaddyfile sets up the handler from:
//
//	hdc_forward
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	f := new(Forward)
	return f, f.UnmarshalCaddyfile(h.Dispenser)
}
