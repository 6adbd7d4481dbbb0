// Package caddymodule is the edge of Health Data Connect: Caddy modules
// that put the gateway's transport in front of its backends, all
// registered by importing this package (imports.go), as Caddy's
// modules/standard registers Caddy's. Each module is a package of its own,
// with its Caddyfile syntax and its answers, over package edge, which they
// share:
//
//   - edge: the hdc app (the global option hdc): the key source, the
//     verifier of access tokens, the freshness check of envelopes and the
//     rate limits' counting, kept across config reloads; admin.api.hdc,
//     its keys on Caddy's admin API; and what every handler needs of a
//     request (problems, spans, the client's id, metrics);
//   - hdcauth: hdc_auth, the first handler of every API route: timing,
//     the request's headers cleaned, the bearer token checked;
//   - hdcratelimit: hdc_ratelimit, the client's limits;
//   - hdcjwe: hdc_jwe, requests decrypted from their JWE envelope,
//     answers encrypted in one;
//   - hdcforward: hdc_forward, only the headers the backend reads;
//   - hdcsite: hdc_site, a host the site does not serve refused;
//   - hdctracing: hdc_tracing, a span of each request;
//   - hdcframing: hdc_framing, a listener wrapper that refuses HTTP/1.x
//     requests of ambiguous length (over package h1framing).
//
// The order of the handlers in a route is decided here for all of them
// (order.go). Below the modules stand what they use: tokenauth (the bearer
// token check), ratelimit (the counting), spool (bodies held between
// reading and use) and h1framing. The wire format of envelopes is package
// internal/jwe, shared with hdc and the tests; the reference configuration
// is the repository's Caddyfile, which this package's tests run in
// process.
package caddymodule
