// Package tokenauth checks the bearer tokens of Health Data Connect: JWTs
// signed by the backend with Ed25519 (alg "EdDSA"), whose header kid names a
// key of the backend's JWK Set and whose claims carry the client (sub), the
// workspace (ws) and the token id (jti).
//
// A [Verifier] checks a token against a [KeySource]: [RemoteKeySource] fetches
// the JWK Set from the backend and caches it, refetching on an unknown kid at
// most once per cooldown; [FileKeySource] reads a local JWK Set file and
// re-reads it when it changes. Verified access tokens are remembered for a
// short while (keyed by their SHA-256, never by the token itself) so that a
// client's next request costs a hash instead of a signature verification.
//
// Every refusal is one of the package's [*Error] values, possibly wrapped with
// a detail; [errors.As] yields its Reason, a stable identifier for metrics and
// problem codes. No error text contains the token.
//
// The package is plain Go: the edge's Caddy module wires it into requests.
package tokenauth
