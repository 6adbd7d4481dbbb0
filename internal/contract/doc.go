// Package contract is what the edge (caddymodule) and the backend agree on,
// written once: the identity headers the edge forwards after checking a
// bearer token, how the backend knows a request came from the edge, the
// syntax of the ids and key ids both sides check, the encryption headers
// clients send, the API's paths, and how a webhook subscription's signing
// key is read, which its subscribers read alike (hdc webhooks listen).
//
// The edge strips every header with HeaderPrefix that a client sends and
// sets its own; the backend believes them only on a request the edge made
// (see edge.go). Nothing else in the repository spells these names.
package contract
