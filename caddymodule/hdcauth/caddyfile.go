package hdcauth

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("hdc_auth", parseCaddyfile)
}

// parseCaddyfile sets up the handler from:
//
//	hdc_auth [token|refresh|public]
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	a := new(Auth)
	err := a.UnmarshalCaddyfile(h.Dispenser)
	return a, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens.
func (a *Auth) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		switch d.Val() {
		case authToken, authRefresh, authPublic:
			a.Mode = d.Val()
		default:
			return d.Errf("unknown hdc_auth mode %q (token, refresh or public)", d.Val())
		}
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	if d.NextBlock(0) {
		return d.Errf("hdc_auth takes no block; configure tokens in the hdc global option")
	}
	return nil
}
