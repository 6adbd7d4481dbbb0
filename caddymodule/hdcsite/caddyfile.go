package hdcsite

import (
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("hdc_site", parseCaddyfile)
}

// parseCaddyfile sets up the handler from:
//
//	hdc_site <address>...
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	s := new(Site)
	return s, s.UnmarshalCaddyfile(h.Dispenser)
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens: the site's
// addresses, as the site block names them.
func (s *Site) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	for d.NextArg() {
		addr, err := httpcaddyfile.ParseAddress(d.Val())
		if err != nil {
			return d.Errf("hdc_site: %v", err)
		}
		if addr.Host != "" {
			s.Hosts = append(s.Hosts, strings.ToLower(addr.Host))
		}
	}
	if d.NextBlock(0) {
		return d.Err("hdc_site takes no block")
	}
	return nil
}
