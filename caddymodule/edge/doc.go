// Package edge is what the edge's modules share, below them as caddyhttp
// is below Caddy's handlers. It imports no handler; each handler's package
// imports it.
//
// The hdc app (app.go; the global option hdc, caddyfile.go) holds the
// state the handlers share across config reloads, each handler reaching
// its part through an accessor: the clients' keys (keys.go: the backends'
// key plane, or a registry file's watcher), the verifier of access tokens
// (tokens.go), the freshness check of envelopes (fresh.go, jtimemory.go)
// and the rate limits' counting (ratelimits.go, over package ratelimit).
// Its own requests to the backends go over the hop's TLS (hoptls.go) and
// fail over between them (failover.go, over package hopclient);
// admin.api.hdc (admin.go) shows its keys on Caddy's admin API.
//
// What a handler needs of a request is here too: the answers more than one
// handler gives (problems.go), the spans of a request's steps (spans.go),
// header fields by their canonical names (fields.go), the client hdc_auth
// names for the handlers after it (clientid.go), an answer's status
// (status.go), the arguments of a Caddyfile directive (args.go) and the
// edge's metrics, hdc_edge_* (metrics.go, series.go).
package edge
