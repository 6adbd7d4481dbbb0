package caddymodule

import (
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// TestEveryModuleRegistered: importing this package registers every
// module of the edge, as hdc-edge, hdc up and an xcaddy build rely on
// (their Caddyfile directives: TestCaddyfileDirectives).
func TestEveryModuleRegistered(t *testing.T) {
	for _, id := range []string{
		"hdc", "admin.api.hdc", "caddy.listeners.hdc_framing",
		"http.handlers.hdc_auth", "http.handlers.hdc_ratelimit", "http.handlers.hdc_jwe", "http.handlers.hdc_forward",
		"http.handlers.hdc_site", "http.handlers.hdc_tracing",
	} {
		if _, err := caddy.GetModule(id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}
