package h1framing

import (
	"bytes"
	"strconv"
)

// Verdict is what a Tracker concluded about the bytes it was fed.
type Verdict int

const (
	// Continue: the bytes are well-framed HTTP/1.x so far.
	Continue Verdict = iota
	// Ambiguous: a request carries both Content-Length and
	// Transfer-Encoding; it must be refused.
	Ambiguous
	// Untracked: the connection is not plain HTTP/1.x (TLS, HTTP/2, a
	// protocol the server switched to) or is framed in a way the server
	// will refuse on its own; the tracker stops looking.
	Untracked
)

// Switch is a set of the answers of the server that would make the
// connection stop being HTTP/1.x.
type Switch int

const (
	// SwitchOn101: a request asked to upgrade (Upgrade), so a 101 answer
	// switches protocols.
	SwitchOn101 Switch = 1 << iota
	// SwitchOn2xx: the last request is a CONNECT, so a 2xx answer opens a
	// tunnel.
	SwitchOn2xx
)

// maxLine is the longest header line the tracker keeps; longer lines are
// only needed for their first bytes (the field name and a short value).
const maxLine = 256

type state int

const (
	sLineStart state = iota // start of a request line or a header line
	sLine                   // inside a line
	sBody                   // inside a Content-Length body
	sChunkSize              // inside a chunk-size line
	sChunkData              // inside a chunk's data
	sChunkEnd               // the CRLF after a chunk's data
	sTrailer                // inside the trailer section
	sDone                   // stopped: Ambiguous or Untracked
)

// Tracker follows the framing of the requests of one connection, fed the
// bytes in order with Feed.
type Tracker struct {
	st       state
	verdict  Verdict
	line     []byte // the current line, at most maxLine bytes of it
	inHeader bool   // a request line was read: the lines are header fields
	connect  bool   // this request is a CONNECT
	upgrade  bool   // a request asked to upgrade
	cl, te   bool   // this request's Content-Length and Transfer-Encoding
	chunked  bool   // its transfer coding ends in chunked
	length   int64  // its Content-Length value
	left     int64  // bytes left of the body or chunk
	start    int64  // the offset of the first byte of the request being read
	bytes    int64  // bytes fed so far
}

// Feed follows p, the next bytes of the connection, and returns the
// verdict so far. Once the verdict is not Continue, Feed ignores what
// follows.
func (t *Tracker) Feed(p []byte) Verdict {
	if t.bytes == 0 && len(p) > 0 && p[0] == 0x16 {
		t.stop(Untracked) // a TLS handshake: nothing here is readable
	}
	for i := 0; i < len(p) && t.st != sDone; {
		if t.st == sLineStart && !t.inHeader {
			t.start = t.bytes + int64(i)
		}
		i += t.step(p[i:])
	}
	t.bytes += int64(len(p))
	return t.verdict
}

// Settled returns how many of the bytes fed so far a server may be given:
// all of them, except the request line and header fields of a request
// whose header block has not ended, and an ambiguous request and what
// follows it.
func (t *Tracker) Settled() int64 {
	switch {
	case t.verdict == Ambiguous:
		return t.start
	case t.verdict == Untracked:
		return t.bytes
	case t.inHeader || t.st == sLine:
		return t.start
	}
	return t.bytes
}

// step consumes some bytes of p (at least one) and returns how many.
func (t *Tracker) step(p []byte) int {
	switch t.st {
	case sBody, sChunkData:
		n := int(min(int64(len(p)), t.left))
		t.left -= int64(n)
		switch {
		case t.left > 0:
		case t.st == sBody:
			t.nextRequest()
		default:
			t.st = sChunkEnd
		}
		return n
	case sChunkEnd:
		return t.chunkEnd(p[0])
	}
	// A line: up to and including its LF.
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		t.keep(p)
		t.st = stateOfLine(t.st)
		return len(p)
	}
	t.keep(p[:i])
	line := bytes.TrimSuffix(t.line, []byte("\r"))
	t.line = t.line[:0]
	t.endLine(line)
	return i + 1
}

// stateOfLine is the state of a line that continues past a read.
func stateOfLine(s state) state {
	if s == sLineStart {
		return sLine
	}
	return s
}

func (t *Tracker) keep(b []byte) {
	if room := maxLine - len(t.line); room > 0 {
		t.line = append(t.line, b[:min(room, len(b))]...)
	}
}

// chunkEnd consumes the CRLF that ends a chunk's data.
func (t *Tracker) chunkEnd(c byte) int {
	switch c {
	case '\r':
	case '\n':
		t.st = sChunkSize
	default:
		t.stop(Untracked) // the server refuses the body
	}
	return 1
}

func (t *Tracker) stop(v Verdict) {
	t.verdict, t.st = v, sDone
}

// Switched stops the tracker: the server switched the connection to
// another protocol (see Switch), so what follows is not HTTP/1.x.
func (t *Tracker) Switched() {
	if t.verdict == Continue {
		t.stop(Untracked)
	}
}

// Switch returns the answers of the server that would switch the
// connection to another protocol, after the requests fed so far.
func (t *Tracker) Switch() Switch {
	var s Switch
	if t.upgrade {
		s |= SwitchOn101
	}
	if t.connect {
		s |= SwitchOn2xx
	}
	return s
}

// endLine acts on a complete line, its CRLF removed.
func (t *Tracker) endLine(line []byte) {
	switch {
	case t.st == sChunkSize:
		t.chunkSize(line)
	case t.st == sTrailer:
		if len(line) == 0 {
			t.nextRequest()
		}
	case !t.inHeader:
		t.requestLine(line)
	case len(line) == 0:
		t.endHeader()
	default:
		t.headerField(line)
	}
}

// requestLine reads the first line of a request.
func (t *Tracker) requestLine(line []byte) {
	t.st = sLineStart
	switch {
	case len(line) == 0:
		return // an empty line before a request
	case bytes.HasPrefix(line, []byte("PRI * HTTP/2")):
		t.stop(Untracked) // HTTP/2
		return
	}
	t.inHeader, t.cl, t.te, t.chunked, t.length = true, false, false, false, 0
	// A tunnel opens only if the server answers this CONNECT with a 2xx;
	// until then, the bytes after it are requests.
	t.connect = bytes.HasPrefix(line, []byte("CONNECT "))
}

// headerField notes the framing fields of a header line.
func (t *Tracker) headerField(line []byte) {
	t.st = sLineStart
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		return // a continuation line, or one the server refuses
	}
	value = bytes.TrimSpace(value)
	switch {
	case bytes.EqualFold(name, []byte("Content-Length")):
		n, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil || n < 0 || (t.cl && n != t.length) {
			t.stop(Untracked) // the server refuses it
			return
		}
		t.cl, t.length = true, n
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		t.te = true
		codings := bytes.Split(value, []byte(","))
		t.chunked = bytes.EqualFold(bytes.TrimSpace(codings[len(codings)-1]), []byte("chunked"))
	case bytes.EqualFold(name, []byte("Upgrade")):
		// The connection stops being HTTP/1.x only if the server answers
		// 101; until then, the bytes after this request are requests.
		t.upgrade = true
	}
}

// endHeader decides the body of the request whose header block ended.
func (t *Tracker) endHeader() {
	switch {
	case t.te && t.cl:
		t.stop(Ambiguous)
	case t.te && !t.chunked:
		t.stop(Untracked) // the server refuses it
	case t.te:
		t.inHeader, t.st = false, sChunkSize
	case t.length > 0:
		t.inHeader, t.st, t.left = false, sBody, t.length
	default:
		t.nextRequest()
	}
}

// chunkSize reads a chunk-size line (hex, perhaps with extensions).
func (t *Tracker) chunkSize(line []byte) {
	hexSize, _, _ := bytes.Cut(line, []byte(";"))
	n, err := strconv.ParseInt(string(bytes.TrimSpace(hexSize)), 16, 64)
	switch {
	case err != nil || n < 0:
		t.stop(Untracked) // the server refuses the body
	case n == 0:
		t.st = sTrailer
	default:
		t.st, t.left = sChunkData, n
	}
}

func (t *Tracker) nextRequest() {
	t.inHeader, t.st = false, sLineStart
}
