package hdcjwe

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/health-data-connect/hdc/caddymodule/edge"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("hdc_jwe", parseCaddyfile)
}

// parseCaddyfile sets up the handler from:
//
//	hdc_jwe [login|any_client] {
//		require
//		max_body        <size>
//		spool_threshold <size>
//		spool_dir       <dir>
//		max_response    <size>
//	}
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	t := new(JWE)
	err := t.UnmarshalCaddyfile(h.Dispenser)
	return t, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens.
func (j *JWE) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		switch d.Val() {
		case "login":
			j.Login = true
		case "any_client":
			j.AnyClient = true
		default:
			return d.Errf("unknown hdc_jwe mode %q (login or any_client)", d.Val())
		}
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		var err error
		switch d.Val() {
		case "require":
			if d.NextArg() {
				return d.ArgErr()
			}
			j.Require = true
		case "max_body":
			err = edge.SizeArg(d, &j.MaxBody)
		case "spool_threshold":
			err = edge.SizeArg(d, &j.SpoolThreshold)
		case "spool_dir":
			err = edge.StringArg(d, &j.SpoolDir)
		case "max_response":
			err = edge.SizeArg(d, &j.MaxResponse)
		default:
			return d.Errf("unknown hdc_jwe subdirective %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Interface guards
var _ caddyfile.Unmarshaler = (*JWE)(nil)
