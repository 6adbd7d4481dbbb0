package caddymodule

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/health-data-connect/hdc/caddymodule/edge"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("hdc_forward", parseCaddyfileForward)
	httpcaddyfile.RegisterHandlerDirective("hdc_tracing", parseCaddyfileTracing)
	httpcaddyfile.RegisterHandlerDirective("hdc_site", parseCaddyfileSite)
	// Identity first, then decryption (it binds the key to the identity),
	// then the headers the backend does not read removed, all before the
	// request is proxied, whether by a reverse_proxy of the route or by a
	// named route it invokes (the reference Caddyfile's backend).
	// Registered together so their relative order does not depend on file
	// order.
	httpcaddyfile.RegisterDirectiveOrder("hdc_auth", httpcaddyfile.Before, "invoke")
	// The limits count right after the identity, before the body is read
	// (each is put right before invoke, so in the order registered).
	httpcaddyfile.RegisterDirectiveOrder("hdc_ratelimit", httpcaddyfile.Before, "invoke")
	httpcaddyfile.RegisterDirectiveOrder("hdc_jwe", httpcaddyfile.Before, "invoke")
	httpcaddyfile.RegisterDirectiveOrder("hdc_forward", httpcaddyfile.Before, "invoke")
	// The trace holds the whole request, where Caddy puts its own tracing;
	// a request for a host the site does not serve is answered before it
	// (each is put right before tracing, so hdc_site goes first).
	httpcaddyfile.RegisterDirectiveOrder("hdc_site", httpcaddyfile.Before, "tracing")
	httpcaddyfile.RegisterDirectiveOrder("hdc_tracing", httpcaddyfile.Before, "tracing")
}

// parseCaddyfileTracing sets up the handler from:
//
//	hdc_tracing {
//		trust_parent none|trusted_proxies|all
//	}
func parseCaddyfileTracing(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	t := new(Tracing)
	err := t.UnmarshalCaddyfile(h.Dispenser)
	return t, err
}

// UnmarshalCaddyfile sets up the wrapper from Caddyfile tokens: it takes
// no arguments.
func (f *Framing) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the wrapper's name
	if d.NextArg() || d.NextBlock(0) {
		return d.Errf("hdc_framing takes no arguments")
	}
	return nil
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

func parseCaddyfileForward(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	f := new(Forward)
	return f, f.UnmarshalCaddyfile(h.Dispenser)
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens: it takes
// no arguments, and a block of trust_parent alone; the environment
// configures the tracing.
func (t *Tracing) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.Errf("hdc_tracing takes no arguments: OTEL_* environment variables configure it")
	}
	for d.NextBlock(0) {
		if d.Val() != "trust_parent" {
			return d.Errf("unknown hdc_tracing subdirective %q", d.Val())
		}
		if err := edge.StringArg(d, &t.TrustParent); err != nil {
			return err
		}
		if err := checkTrustParent(t.TrustParent); err != nil {
			return d.Err(err.Error())
		}
	}
	return nil
}
