// Package h1framing refuses HTTP/1.x requests whose body length is
// ambiguous: a request that carries both Content-Length and
// Transfer-Encoding. Go's server lets Transfer-Encoding win and forgets the
// Content-Length before any handler runs (RFC 9112 §6.3), so no handler
// can see such a request, yet a proxy in front that trusts the
// Content-Length reads a different request boundary: the bytes after the
// chunked body are request smuggling. RFC 9112 §6.3 asks the server to
// close the connection after answering such a request; this package
// refuses it, with a 400 problem, and closes.
//
// Conn watches the bytes a server reads from a connection and follows
// their framing (header blocks, Content-Length bodies, chunked bodies)
// with a Tracker, holding each header block back until it ends (at most
// MaxHeader bytes), so that the server never holds part of a request Conn
// refuses. It is hand-written because what it must see, the header
// block as sent, is gone once net/http has parsed it, and net/http offers
// no hook before that.
//
// It must see decrypted bytes: in Caddy, the listener wrapper comes after
// tls. What it cannot follow passes through at once, untouched: TLS
// records (a wrapper placed before tls), HTTP/2 (by ALPN or prior
// knowledge), and a connection the server switched to another protocol
// (a 101 answer to an upgrade, a 2xx answer to CONNECT). A request that
// only asks to upgrade, which the server answers as HTTP/1.1, changes
// nothing: the check goes on after it.
package h1framing
