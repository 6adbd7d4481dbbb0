// Command hdc-edge is Caddy with the Health Data Connect modules, all of
// which importing package caddymodule registers: the hdc app (the
// clients' keys, the bearer token verifier, the freshness check, the rate
// limits' counting), the hdc_site, hdc_auth, hdc_ratelimit, hdc_jwe,
// hdc_forward and hdc_tracing handlers, the hdc_framing listener wrapper
// and the /hdc/ admin API, next to Caddy's standard modules. Its traces (hdc_tracing), configured by the OTEL_*
// environment, name the service hdc-edge unless OTEL_SERVICE_NAME names it
// otherwise.
//
//	hdc-edge run --config Caddyfile
//	hdc-edge adapt --config Caddyfile
//	hdc-edge list-modules
//	hdc-edge version
package main

import (
	"fmt"
	"os"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/health-data-connect/hdc/caddymodule"
	"github.com/health-data-connect/hdc/caddymodule/hdctracing"
	"github.com/health-data-connect/hdc/internal/version"
)

func main() {
	// Caddy's own version command would name Caddy's version only.
	if len(os.Args) == 2 && os.Args[1] == "version" {
		_, caddyVersion := caddy.Version()
		fmt.Printf("hdc-edge %s\nCaddy %s\n", version.Get(), caddyVersion)
		return
	}
	if err := setSiteEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "hdc-edge:", err)
		os.Exit(1)
	}
	if err := preflight(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "hdc-edge:", err)
		os.Exit(1)
	}
	if err := hdctracing.StartTracing("hdc-edge"); err != nil {
		fmt.Fprintln(os.Stderr, "hdc-edge:", err)
		os.Exit(1)
	}
	caddycmd.Main()
}
