package hdcframing

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// UnmarshalCaddyfile sets up the wrapper from Caddyfile tokens: it takes
// no arguments.
func (f *Framing) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the wrapper's name
	if d.NextArg() || d.NextBlock(0) {
		return d.Errf("hdc_framing takes no arguments")
	}
	return nil
}
