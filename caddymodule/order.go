package caddymodule

import "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

// The place of each of the edge's handlers in a route, decided here for
// all of them: each package registers its directive, and none knows the
// others.
func init() {
	// Identity first, then decryption (it binds the key to the identity),
	// then the headers the backend does not read removed, all before the
	// request is proxied, whether by a reverse_proxy of the route or by a
	// named route it invokes (the reference Caddyfile's backend).
	// Registered together, here, so that their relative order depends on
	// no package's initialization order.
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
