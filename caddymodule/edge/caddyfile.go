package edge

import (
	"strconv"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

func init() {
	httpcaddyfile.RegisterGlobalOption("hdc", parseGlobalOption)
}

// parseGlobalOption sets up the hdc app from the global options block:
//
//	hdc {
//		keys {
//			file          <path>          # a registry file (or: registry <path>)
//			keeper        <url>
//			poll_interval <duration>
//
//			backend       <url>...        # or the backends' key plane
//			tls_client_auth <cert file> <key file>
//			tls_ca          <file>
//			tls_server_name <name>
//			cache_size    <keys>
//			lookup_rate   <per second> [<burst>]
//			source_lookup_rate <per second> [<burst>]
//			unknown_ttl   <duration>
//		}
//		tokens {
//			jwks_url         <url>
//			jwks_backend     <url>...     # or the backends' internal listeners
//			jwks_file        <path>
//			issuer           <iss>
//			audience         <aud>
//			leeway           <duration>
//			refresh_cooldown <duration>
//			cache_size       <entries>
//			cache_max_age    <duration>
//			refresh_window   <duration>
//			tls_client_auth  <cert file> <key file>
//			tls_ca           <file>
//			tls_server_name  <name>
//		}
//		fresh {
//			window   <duration>
//			remember <count>
//		}
//		rate_limits { … }             # caddyfile_ratelimits.go
//	}
func parseGlobalOption(d *caddyfile.Dispenser, _ any) (any, error) {
	var app App
	if err := app.UnmarshalCaddyfile(d); err != nil {
		return nil, err
	}
	return httpcaddyfile.App{Name: "hdc", Value: caddyconfig.JSON(app, nil)}, nil
}

// UnmarshalCaddyfile sets up the app from Caddyfile tokens.
func (a *App) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the option name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "keys":
			if err := a.Keys.unmarshalCaddyfile(d); err != nil {
				return err
			}
		case "tokens":
			if err := a.Tokens.unmarshalCaddyfile(d); err != nil {
				return err
			}
		case "fresh":
			if err := a.Fresh.unmarshalCaddyfile(d); err != nil {
				return err
			}
		case "rate_limits":
			if err := a.RateLimits.unmarshalCaddyfile(d); err != nil {
				return err
			}
		default:
			return d.Errf("unknown hdc subdirective %q", d.Val())
		}
	}
	return nil
}

// unmarshalCaddyfile reads the keys block of the hdc global option.
func (c *KeysConfig) unmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return hopBlock(d, &c.HopTLS, "keys", func() (bool, error) {
		switch d.Val() {
		case "file", "registry":
			return true, StringArg(d, &c.Registry)
		case "keeper":
			return true, StringArg(d, &c.Keeper)
		case "poll_interval":
			return true, oneDuration(d, &c.PollInterval)
		case "backend", "backends":
			return true, manyStrings(d, &c.Backends)
		case "cache_size":
			return true, oneInt(d, &c.CacheSize)
		case "lookup_rate":
			return true, unmarshalRate(d, &c.LookupRate, &c.LookupBurst)
		case "source_lookup_rate":
			return true, unmarshalRate(d, &c.SourceRate, &c.SourceBurst)
		case "unknown_ttl":
			return true, oneDuration(d, &c.UnknownTTL)
		}
		return false, nil
	})
}

// unmarshalCaddyfile reads the fresh block of the hdc global option:
//
//	fresh {
//		window   <duration>
//		remember <count>
//	}
func (c *FreshConfig) unmarshalCaddyfile(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(1) {
		var err error
		switch d.Val() {
		case "window":
			err = oneDuration(d, &c.Window)
		case "remember":
			err = oneInt(d, &c.Remember)
		default:
			return d.Errf("unknown fresh subdirective %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// hopBlock reads the block d is on, named name: the hop's TLS
// subdirectives into hop, and each other one with sub, which reports
// whether it knows it.
func hopBlock(d *caddyfile.Dispenser, hop *HopTLS, name string, sub func() (bool, error)) error {
	for d.NextBlock(1) {
		known, err := hop.unmarshalCaddyfile(d)
		if !known {
			known, err = sub()
		}
		if !known {
			return d.Errf("unknown %s subdirective %q", name, d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// unmarshalRate reads a rate subdirective: <per second> [<burst>].
func unmarshalRate(d *caddyfile.Dispenser, rate *float64, burst *int) error {
	name, args := d.Val(), d.RemainingArgs()
	if len(args) < 1 || len(args) > 2 {
		return d.ArgErr()
	}
	r, err := strconv.ParseFloat(args[0], 64)
	if err != nil || r <= 0 {
		return d.Errf("%s: %q is not a positive number", name, args[0])
	}
	*rate = r
	if len(args) == 2 {
		if *burst, err = strconv.Atoi(args[1]); err != nil || *burst <= 0 {
			return d.Errf("%s: the burst %q is not a positive integer", name, args[1])
		}
	}
	return nil
}

// unmarshalCaddyfile reads the tokens block of the hdc global option.
func (c *TokensConfig) unmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return hopBlock(d, &c.HopTLS, "tokens", func() (bool, error) {
		switch d.Val() {
		case "jwks_url":
			return true, StringArg(d, &c.JWKSURL)
		case "jwks_backend", "jwks_backends":
			return true, manyStrings(d, &c.JWKSBackends)
		case "jwks_file":
			return true, StringArg(d, &c.JWKSFile)
		case "issuer":
			return true, StringArg(d, &c.Issuer)
		case "audience":
			return true, StringArg(d, &c.Audience)
		case "leeway":
			return true, oneDuration(d, &c.Leeway)
		case "refresh_cooldown":
			return true, oneDuration(d, &c.RefreshCooldown)
		case "cache_size":
			return true, oneInt(d, &c.CacheSize)
		case "cache_max_age":
			return true, oneDuration(d, &c.CacheMaxAge)
		case "refresh_window":
			return true, oneDuration(d, &c.RefreshWindow)
		}
		return false, nil
	})
}

// Interface guards
var _ caddyfile.Unmarshaler = (*App)(nil)
