// Package h1framing refuses HTTP/1.x requests whose body length is
// ambiguous: a request that carries both Content-Length and
// Transfer-Encoding. Go's server lets Transfer-Encoding win and forgets the
// Content-Length before any handler runs (RFC 9112 §6.3), so no handler
// can see such a request, yet a proxy in front that trusts the
// Content-Length reads a different request boundary: the bytes after the
// chunked body are request smuggling. RFC 9112 §6.1 asks the server to
// refuse or to close the connection after answering; this package refuses,
// with a 400 problem, and closes.
//
// Conn watches the bytes a server reads from a connection and follows
// their framing (header blocks, Content-Length bodies, chunked bodies)
// with a Tracker, holding each header block back until it ends (at most
// MaxHeader bytes), so that the server never holds part of a request Conn
// refuses. It is hand-written because what it must see, the header
// block as sent, is gone once net/http has parsed it, and net/http offers
// no hook before that. It sees only plaintext HTTP/1.x: a TLS connection
// (the edge terminating TLS itself) and an HTTP/2 one pass through
// untouched; there, a chunked request's connection is closed after its
// answer instead (see caddymodule.Auth).
package h1framing
