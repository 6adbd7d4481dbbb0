package caddymodule

// Every module of the edge, registered by importing its package, as
// Caddy's modules/standard registers Caddy's.
import (
	_ "github.com/health-data-connect/hdc/caddymodule/edge"
	_ "github.com/health-data-connect/hdc/caddymodule/hdcauth"
	_ "github.com/health-data-connect/hdc/caddymodule/hdcforward"
	_ "github.com/health-data-connect/hdc/caddymodule/hdcframing"
	_ "github.com/health-data-connect/hdc/caddymodule/hdcjwe"
	_ "github.com/health-data-connect/hdc/caddymodule/hdcratelimit"
	_ "github.com/health-data-connect/hdc/caddymodule/hdcsite"
	_ "github.com/health-data-connect/hdc/caddymodule/hdctracing"
)
