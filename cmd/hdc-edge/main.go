// Command hdc-edge is Caddy with the Health Data Connect modules: the hdc app
// (key registry, bearer token verifier), the hdc_auth and hdc_jwe handlers
// and the /hdc/ admin API, next to Caddy's standard modules.
//
//	hdc-edge run --config Caddyfile
//	hdc-edge adapt --config Caddyfile
//	hdc-edge list-modules
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/health-data-connect/hdc/caddymodule"
)

func main() {
	caddycmd.Main()
}
