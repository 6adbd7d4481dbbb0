package h1framing

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/health-data-connect/hdc/internal/problem"
)

// MaxHeader is the longest request line and header block Conn holds back
// while it waits for the block's end; a longer one is refused with 431.
const MaxHeader = 64 << 10

// lingerTime and lingerBytes bound what Close reads after a refusal, so
// that closing with unread bytes does not reset the connection before the
// peer has read the refusal.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 256 << 10
)

// errRefused is the cause of the read error a refused connection returns.
var errRefused = errors.New("h1framing: request refused")

// The refusals: a problem, and the connection closed.
var (
	ambiguous = refusal(400, "A request may not carry both Content-Length and Transfer-Encoding (RFC 9112 §6.1); the connection is closed.")
	tooLarge  = refusal(431, "The request line and header fields exceed "+strconv.Itoa(MaxHeader>>10)+" KiB; the connection is closed.")
)

func refusal(status int, detail string) []byte {
	body := problem.New(status, problem.CodeInvalidRequest, detail).Body()
	head := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) +
		"\r\nContent-Type: " + problem.ContentType + "\r\nContent-Length: " + strconv.Itoa(len(body)) +
		"\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
	return append([]byte(head), body...)
}

// Conn is a server connection whose reads a Tracker follows. It holds back
// each request line and header block until the block ends, so that the
// server is never given a part of a request Conn refuses. When the server
// comes to read a refused request, Conn writes the refusal itself and
// fails the read with a network read error, on which net/http closes the
// connection without an answer of its own.
//
// What the tracker does not follow (TLS records, HTTP/2, a protocol the
// server switched to) passes through at once. Conn sees a switch in what
// the server writes: a 101 answer after a request asked to upgrade, or a
// 2xx answer to a CONNECT. Until then, a request that asks to switch is
// one more HTTP/1.x request, and the framing check goes on after it.
//
// Writing from Read is safe because net/http reads a request only once
// the answer to the one before is written: only its one-byte background
// read, which watches the connection while a handler runs, overlaps a
// response, and Conn never fails that one.
type Conn struct {
	net.Conn
	// Refused, when set, is called once when a request is refused.
	Refused func(net.Conn)

	t      Tracker
	held   []byte // bytes read but not yet given to the server
	given  int64  // bytes given to the server
	answer []byte // the refusal, once there is one
	// refused is set once a request is refused. It is atomic because
	// net/http may close a connection from another goroutine.
	refused atomic.Bool
	// switchOn is the tracker's Switch, for Write; switched is set by a
	// Write that switched protocols, for Read. Both are atomic because
	// net/http writes and reads a connection from different goroutines.
	switchOn atomic.Int32
	switched atomic.Bool
}

// Wrap returns c behind a Conn that calls refused, if not nil, when it
// refuses a request. A TLS connection (one with a ConnectionState
// method, as Caddy's listener wrappers after tls see) stays one, so that
// the server still knows its requests came over TLS.
func Wrap(c net.Conn, refused func(net.Conn)) net.Conn {
	fc := &Conn{Conn: c, Refused: refused}
	if tc, ok := c.(connectionStater); ok {
		return &tlsConn{fc, tc}
	}
	return fc
}

type connectionStater interface {
	ConnectionState() tls.ConnectionState
}

// tlsConn is a Conn over a TLS connection.
type tlsConn struct {
	*Conn
	tls connectionStater
}

// ConnectionState returns the state of the TLS connection under the Conn.
func (c *tlsConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

// Read implements net.Conn.
func (c *Conn) Read(p []byte) (int, error) {
	if c.switched.Load() {
		c.t.Switched()
	}
	for {
		if c.ready() > 0 {
			return c.give(p), nil
		}
		if c.refused.Load() {
			return 0, c.refuse(p)
		}
		if c.t.verdict == Untracked {
			return c.Conn.Read(p) // nothing is held: the bytes pass through
		}
		n, err := c.read(p)
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// ready is the number of held bytes the server may be given.
func (c *Conn) ready() int {
	return int(min(c.t.Settled()-c.given, int64(len(c.held))))
}

// give moves ready bytes into p.
func (c *Conn) give(p []byte) int {
	n := copy(p, c.held[:c.ready()])
	c.held = c.held[:copy(c.held, c.held[n:])]
	c.given += int64(n)
	return n
}

// read reads from the connection: straight into p when nothing is held,
// returning how much of it the server may have, and otherwise behind what
// is held.
func (c *Conn) read(p []byte) (int, error) {
	if len(c.held) == 0 {
		n, err := c.Conn.Read(p)
		c.feed(p[:n])
		k := int(min(c.t.Settled()-c.given, int64(n)))
		c.held = append(c.held, p[k:n]...)
		c.given += int64(k)
		return k, err
	}
	if len(c.held) >= MaxHeader {
		c.refuseWith(tooLarge)
		return 0, nil
	}
	if cap(c.held)-len(c.held) < 4<<10 {
		c.held = append(c.held, make([]byte, 4<<10)...)[:len(c.held)]
	}
	n, err := c.Conn.Read(c.held[len(c.held):min(cap(c.held), MaxHeader)])
	c.held = c.held[:len(c.held)+n]
	c.feed(c.held[len(c.held)-n:])
	return 0, err
}

// feed follows b. The tracker counts bytes after its verdict too, so that
// once it stops looking, what it holds becomes the server's.
func (c *Conn) feed(b []byte) {
	before := c.t.verdict
	if c.t.Feed(b) == Ambiguous && before == Continue {
		c.refuseWith(ambiguous)
	}
	if s := int32(c.t.Switch()); s != c.switchOn.Load() {
		c.switchOn.Store(s)
	}
}

// Write implements net.Conn. It notes an answer that switches the
// connection to another protocol.
func (c *Conn) Write(p []byte) (int, error) {
	if s := Switch(c.switchOn.Load()); s != 0 && !c.switched.Load() && switches(s, p) {
		c.switched.Store(true)
	}
	return c.Conn.Write(p)
}

// switches reports whether p starts an answer that switches the
// connection under s: "HTTP/1.x 101 " or, to a CONNECT, "HTTP/1.x 2nn ".
func switches(s Switch, p []byte) bool {
	if len(p) < len("HTTP/1.1 101 ") || !bytes.HasPrefix(p, []byte("HTTP/1.")) || p[8] != ' ' {
		return false
	}
	code := p[9:12]
	return s&SwitchOn101 != 0 && string(code) == "101" || s&SwitchOn2xx != 0 && code[0] == '2'
}

func (c *Conn) refuseWith(answer []byte) {
	c.answer = answer
	c.refused.Store(true)
	if c.Refused != nil {
		c.Refused(c.Conn)
	}
}

// refuse is a read, into p, of a refused request.
func (c *Conn) refuse(p []byte) error {
	if len(p) == 1 {
		// net/http's background read: failing it would cancel the
		// request whose handler runs. The connection looks idle to it
		// until net/http aborts the read with a deadline.
		return c.idle()
	}
	if c.answer != nil {
		if _, err := c.Conn.Write(c.answer); err != nil {
			return err
		}
		c.answer = nil
	}
	return &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: errRefused}
}

// idle discards what the peer sends until a read fails: the deadline
// net/http sets to abort its background read, or the peer closing.
func (c *Conn) idle() error {
	var buf [512]byte
	for {
		if _, err := c.Conn.Read(buf[:]); err != nil {
			return err
		}
	}
}

// Close implements net.Conn. After a refusal it first ends the sending
// side and reads what the peer still sends, for a while: closing a
// connection with unread bytes resets it, and a reset can destroy the
// refusal before the peer reads it.
func (c *Conn) Close() error {
	if c.refused.Load() {
		if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
			_ = c.Conn.SetReadDeadline(time.Now().Add(lingerTime))
			_, _ = io.CopyN(io.Discard, c.Conn, lingerBytes)
		}
	}
	return c.Conn.Close()
}
