package hdctracing

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/health-data-connect/hdc/caddymodule/edge"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("hdc_tracing", parseCaddyfile)
}

// parseCaddyfile sets up the handler from:
//
//	hdc_tracing {
//		trust_parent none|trusted_proxies|all
//	}
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	t := new(Tracing)
	err := t.UnmarshalCaddyfile(h.Dispenser)
	return t, err
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
