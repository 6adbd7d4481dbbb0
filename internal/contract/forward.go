package contract

import "strings"

// forwarded are the request headers of a client, besides the hop's own
// (HeaderPrefix), that the backend reads: a body's type, the Client-Id of
// the refresh routes, the Idempotency-Key of the webhook routes that take
// one (redelivery, recovery, a signing key's rotation: the backend keeps
// their answers under it, per client), and the W3C trace context, so that one trace runs
// from the client through the edge to the backend. The trace context is
// what the edge's hdc_tracing put back in place of the client's: the
// edge's span, when it traces; otherwise the client's as the edge parsed
// it, or none.
var forwarded = map[string]bool{"Content-Type": true, "Client-Id": true, HeaderIdempotencyKey: true, HeaderTraceparent: true, HeaderTracestate: true}

// HeaderIdempotencyKey is the Idempotency-Key request header
// (draft-ietf-httpapi-idempotency-key-header).
const HeaderIdempotencyKey = "Idempotency-Key"

// The W3C trace context's headers (https://www.w3.org/TR/trace-context/),
// canonical.
const (
	HeaderTraceparent = "Traceparent"
	HeaderTracestate  = "Tracestate"
)

// Forwards reports whether the edge forwards the request header name
// (canonical, as net/http keys header maps) to the backend on a request
// for path: the hop's headers (HeaderPrefix), which the edge alone sets,
// and the ones the backend reads. The bearer token goes only to the
// refresh route, the one route that compares it with the body's
// access_token; elsewhere the backend trusts the identity headers. Every
// other header stays at the edge, and so out of every log line of the
// hop.
func Forwards(path, name string) bool {
	switch {
	case strings.HasPrefix(name, HeaderPrefix), forwarded[name]:
		return true
	case name == "Authorization":
		return path == PathRefresh
	}
	return false
}
