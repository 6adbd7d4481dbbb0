package hdcratelimit

import (
	"slices"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/internal/contract"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("hdc_ratelimit", parseCaddyfile)
}

// parseCaddyfile sets up the handler from:
//
//	hdc_ratelimit login|reads|writes|uploads|by_method
//
// by_method counts GET and HEAD as reads, the other methods as writes.
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	rl := new(RateLimit)
	err := rl.UnmarshalCaddyfile(h.Dispenser)
	return rl, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens.
func (h *RateLimit) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	var class string
	if err := edge.StringArg(d, &class); err != nil {
		return err
	}
	if class == "by_method" {
		h.ByMethod = true
		return nil
	}
	h.Class = contract.RouteClass(class)
	if !slices.Contains(contract.RouteClasses, h.Class) {
		return d.Errf("hdc_ratelimit: unknown class %q (login, reads, writes, uploads, by_method)", class)
	}
	return nil
}
