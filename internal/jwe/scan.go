package jwe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/emmansun/base64"
)

// b64 is the only base64 accepted: URL alphabet, no padding, zero trailing
// bits. It is github.com/emmansun/base64, a drop-in replacement of
// encoding/base64 that decodes with SIMD instructions about eight times
// faster, which counts for uploads of tens of megabytes; FuzzBase64
// checks that it accepts and decodes exactly what encoding/base64 does. Both
// skip CR and LF, so the scanner refuses those first.
var b64 = base64.RawURLEncoding.Strict()

const (
	// readBufferSize is the read buffer of a scanner, which an envelope
	// being read holds: small, so that many slow envelopes hold little.
	readBufferSize = 16 << 10
	maxHeaderText  = 4096 // encoded protected header, or a raw unprotected header object
	maxSmallB64    = 64   // encoded iv, tag
	maxKidText     = 1024
	maxNameText    = 64
)

// limitReader fails with ErrTooLarge once more than n bytes would be read,
// where io.LimitReader would silently stop.
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var probe [1]byte
		n, err := l.r.Read(probe[:])
		if n > 0 {
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// scanner reads the tokens of an envelope from a stream. Small members are
// read a byte at a time; the ciphertext is decoded in buffer-sized chunks.
// Its buffers come from a pool: an edge reads an envelope per request, and
// fresh 64 KiB buffers each time would keep the collector busy.
type scanner struct {
	br      *bufio.Reader
	lim     limitReader
	out     []byte // decoded base64, a chunk at a time
	scratch []byte // the raw text of the last string read
}

var scanners = sync.Pool{New: func() any {
	return &scanner{br: bufio.NewReaderSize(nil, readBufferSize), out: make([]byte, readBufferSize/4*3+3)}
}}

func newScanner(r io.Reader, limit int64) *scanner {
	s := scanners.Get().(*scanner)
	s.lim = limitReader{r: r, n: limit}
	s.br.Reset(&s.lim)
	return s
}

// release returns the scanner to the pool, keeping no reference to the input.
func (s *scanner) release() {
	s.lim = limitReader{}
	s.br.Reset(nil)
	scanners.Put(s)
}

// fail turns a read error into the error the caller reports: the end of the
// input in the middle of an envelope is a format error, the rest pass through.
func fail(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return formatErr("envelope ends unexpectedly")
	}
	return err
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// next returns the next byte that is not JSON whitespace.
func (s *scanner) next() (byte, error) {
	for {
		c, err := s.br.ReadByte()
		if err != nil {
			return 0, err
		}
		if !isSpace(c) {
			return c, nil
		}
	}
}

// expectEnd succeeds when only whitespace is left.
func (s *scanner) expectEnd() error {
	_, err := s.next()
	switch {
	case err == nil:
		return formatErr("trailing data after the JSON object")
	case errors.Is(err, io.EOF):
		return nil
	default:
		return err
	}
}

// readString reads the rest of a JSON string whose opening quote has been
// consumed and returns its raw text, escapes untouched, and whether it has
// any. The text is only valid until the next read.
func (s *scanner) readString(max int) (raw []byte, escaped bool, err error) {
	raw = s.scratch[:0]
	defer func() { s.scratch = raw[:0] }()
	for {
		// The bytes before the next quote, backslash or control character
		// are taken from the buffer at once, not a call to ReadByte each.
		if buf, _ := s.br.Peek(s.br.Buffered()); len(buf) > 0 {
			n := plainRun(buf)
			if len(raw)+n > max {
				return nil, false, formatErr("string member too long")
			}
			raw = append(raw, buf[:n]...)
			_, _ = s.br.Discard(n) // n bytes are buffered
		}
		c, err := s.br.ReadByte()
		if err != nil {
			return nil, false, fail(err)
		}
		switch {
		case c == '"':
			return raw, escaped, nil
		case c < 0x20:
			return nil, false, formatErr("control character in a string")
		case c == '\\':
			escaped = true
			raw = append(raw, c)
			if c, err = s.br.ReadByte(); err != nil {
				return nil, false, fail(err)
			}
		}
		raw = append(raw, c)
		if len(raw) > max {
			return nil, false, formatErr("string member too long")
		}
	}
}

// plainRun is the length of buf's prefix that a JSON string holds as it
// is: no quote, backslash or control character.
func plainRun(buf []byte) int {
	for i, c := range buf {
		if c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return len(buf)
}

// readText reads a JSON string value and unescapes it.
func (s *scanner) readText(max int) (string, error) {
	raw, escaped, err := s.readString(max)
	if err != nil || !escaped {
		return string(raw), err
	}
	return unescape(raw)
}

func unescape(raw []byte) (string, error) {
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var text string
	if json.Unmarshal(quoted, &text) != nil {
		return "", formatErr("invalid string escape")
	}
	return text, nil
}

// object walks a JSON object whose first byte, first, has been read. For
// each member it calls member with the member's name (unescaped, valid
// during the call) and the first byte of its value, which member must read
// to its end.
func (s *scanner) object(first byte, member func(name []byte, value byte) error) error {
	if first != '{' {
		return errNotObject
	}
	var nameBuf [maxNameText]byte
	c, err := s.next()
	if err != nil {
		return fail(err)
	}
	if c == '}' {
		return nil
	}
	for {
		name, value, err := s.memberName(c, &nameBuf)
		if err != nil {
			return err
		}
		if err := member(name, value); err != nil {
			return err
		}
		if c, err = s.next(); err != nil {
			return fail(err)
		}
		if c == '}' {
			return nil
		}
		if c != ',' {
			return errMalformed
		}
		if c, err = s.next(); err != nil {
			return fail(err)
		}
	}
}

// memberName reads a member's name, whose opening quote c has been read,
// into buf, unescaped, and the colon after it; it returns the name and the
// first byte of the value.
func (s *scanner) memberName(c byte, buf *[maxNameText]byte) (name []byte, value byte, err error) {
	if c != '"' {
		return nil, 0, errMalformed
	}
	raw, escaped, err := s.readString(maxNameText)
	if err != nil {
		return nil, 0, err
	}
	name = buf[:copy(buf[:], raw)]
	if escaped {
		text, err := unescape(raw)
		if err != nil {
			return nil, 0, err
		}
		name = buf[:copy(buf[:], text)]
	}
	if c, err = s.next(); err != nil {
		return nil, 0, fail(err)
	}
	if c != ':' {
		return nil, 0, errMalformed
	}
	if value, err = s.next(); err != nil {
		return nil, 0, fail(err)
	}
	return name, value, nil
}

// readSmallB64 reads a short base64url JSON string member and decodes it.
func (s *scanner) readSmallB64(name string, max int) (text string, decoded []byte, err error) {
	raw, escaped, err := s.readString(max)
	if err != nil {
		return "", nil, err
	}
	if escaped {
		return "", nil, formatErr("%q is not base64url", name)
	}
	decoded, err = decodeB64(name, raw)
	return string(raw), decoded, err
}

func decodeB64(name string, text []byte) ([]byte, error) {
	out := make([]byte, b64.DecodedLen(len(text)))
	if !decodeExact(out, text) {
		return nil, formatErr("%q is not base64url", name)
	}
	return out, nil
}

// decodeExact decodes the base64url text into out, which has room for
// DecodedLen(len(text)) bytes, and reports whether the text was exactly
// that: the decoder also skips CR and LF, which are not base64url. It
// finds them without a pass of its own over the text (two passes of
// bytes.IndexByte were 6% of the edge's instructions on a 64 KiB
// request): a whole text of n characters decodes to DecodedLen(n) bytes,
// a shorter one to fewer, since DecodedLen grows with every length that
// decodes at all; and a length of 4k+1 decodes only once a byte is
// skipped. FuzzDecodeExact holds it to refusing CR and LF outright.
func decodeExact(out, text []byte) bool {
	n, err := b64.Decode(out, text)
	return err == nil && len(text)%4 != 1 && n == b64.DecodedLen(len(text))
}

// readSegment reads a compact segment up to the byte stop, or to the end of
// the input or whitespace when stop is 0. It reports whether stop was found.
func (s *scanner) readSegment(stop byte, max int) (seg []byte, found bool, err error) {
	for {
		c, err := s.br.ReadByte()
		switch {
		case errors.Is(err, io.EOF):
			return seg, false, nil
		case err != nil:
			return nil, false, err
		case c == stop && stop != 0:
			return seg, true, nil
		case c == '.':
			return nil, false, errSegments
		case stop == 0 && isSpace(c):
			return seg, false, s.expectEnd()
		}
		seg = append(seg, c)
		if len(seg) > max {
			return nil, false, formatErr("compact segment too long")
		}
	}
}

var (
	errSegments  = formatErr("compact serialization must have exactly five parts")
	errNotObject = formatErr("not a JSON object")
	errMalformed = formatErr("malformed JSON object")
)

// streamB64 decodes base64url text up to the byte stop into dst, without
// holding more than a buffer of it, and returns the number of bytes written.
func (s *scanner) streamB64(dst io.Writer, stop byte, name string) (int64, error) {
	d := b64Stream{dst: dst, out: s.out, name: name}
	for {
		if s.br.Buffered() == 0 {
			if _, err := s.br.Peek(1); err != nil {
				if errors.Is(err, io.EOF) && stop == '.' {
					return 0, errSegments
				}
				return 0, fail(err)
			}
		}
		chunk, _ := s.br.Peek(s.br.Buffered())
		end := bytes.IndexByte(chunk, stop)
		done := end >= 0
		if done {
			chunk = chunk[:end+1] // the stop byte is consumed too
		}
		if err := d.write(chunk[:len(chunk)-boolInt(done)]); err != nil {
			return 0, err
		}
		if _, err := s.br.Discard(len(chunk)); err != nil {
			return 0, err
		}
		if done {
			return d.written, d.flush()
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// b64Stream decodes base64url text handed to it in pieces of any length.
type b64Stream struct {
	dst     io.Writer
	out     []byte // decoded bytes, a chunk at a time
	name    string // the member, for errors
	carry   [4]byte
	nc      int // bytes of an incomplete quantum left from the previous piece
	written int64
}

// write decodes text, keeping an incomplete last quantum for the next piece.
func (d *b64Stream) write(text []byte) error {
	// The decoder rejects every byte outside the alphabet except CR and
	// LF, which decodeExact refuses; the backslash of a JSON escape is
	// outside it.
	if d.nc > 0 {
		k := copy(d.carry[d.nc:], text)
		d.nc += k
		text = text[k:]
		if d.nc == 4 {
			d.nc = 0
			if err := d.emit(d.carry[:]); err != nil {
				return err
			}
		}
	}
	whole := len(text) &^ 3
	if whole > 0 {
		if err := d.emit(text[:whole]); err != nil {
			return err
		}
	}
	d.nc += copy(d.carry[d.nc:], text[whole:])
	return nil
}

// flush decodes the last, incomplete quantum.
func (d *b64Stream) flush() error {
	if d.nc == 0 {
		return nil
	}
	return d.emit(d.carry[:d.nc])
}

func (d *b64Stream) emit(text []byte) error {
	if !decodeExact(d.out, text) {
		return formatErr("%q is not base64url", d.name)
	}
	n := b64.DecodedLen(len(text))
	d.written += int64(n)
	_, err := d.dst.Write(d.out[:n])
	return err
}
