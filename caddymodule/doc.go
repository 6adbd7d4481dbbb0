// Package caddymodule is the edge of Health Data Connect: Caddy modules
// that put the gateway's transport in front of its backends. It registers:
//
//   - the hdc app (app.go; the global option hdc): the key source (the
//     backends' key plane, or a registry file's watcher) and the verifier
//     of access tokens (tokens.go), which the handlers share across config
//     reloads, and whose requests to the backends fail over between them
//     (failover.go);
//   - hdc_auth (auth.go): the first handler of every API route, which
//     times the answer (timing.go), cleans the request's headers and names
//     the hop's facts (hopheaders.go), and checks the bearer token;
//   - hdc_jwe (jwe.go, decrypt.go, spool.go, encrypter.go): requests
//     decrypted from their JWE envelope, answers encrypted in one;
//   - hdc_forward (forward.go): only the headers the backend reads travel
//     to it;
//   - hdc_framing (framing.go, over package h1framing): a listener wrapper
//     that refuses HTTP/1.x requests of ambiguous length;
//   - hdc_tracing (tracing.go, spans.go): a span of each request and of
//     its steps, when the OTEL_* environment names an exporter;
//   - admin.api.hdc (admin.go): the keys, without secrets, on Caddy's
//     admin API.
//
// Their Caddyfile syntax is in caddyfile.go (the app's global option in
// caddyfile_app.go), their metrics (hdc_edge_*) in metrics.go. The wire
// format of envelopes is package internal/jwe, shared with hdc and the
// tests; the reference configuration is the repository's Caddyfile.
package caddymodule
