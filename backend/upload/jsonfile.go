// Package upload reads uploaded files as streams: from a multipart form or
// from the JSON object {"file": "<standard base64>"} that the edge forwards
// after decrypting an encrypted upload. Memory stays constant whatever the
// file's size; the bytes go straight into the blob store.
package upload

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Error is a mistake in an upload the client must correct. Its message is
// safe to show: it never quotes the body.
type Error struct{ msg string }

// Error implements error.
func (e *Error) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &Error{msg: fmt.Sprintf(format, args...)} }

// JSONFile returns a reader of the file carried by a JSON upload body: an
// object with exactly one member, "file", a string of standard (padded)
// base64. It decodes r as it reads it, in constant memory, and is strict:
// JSON escapes inside the string are decoded ("\/", "\u002b"), whitespace
// may surround tokens, but any other member, a repeated "file", a character
// outside the base64 alphabet (newlines included), or anything after the
// object is an *Error. The reader returns io.EOF only once the whole body
// is checked, so a consumer that reads to io.EOF has a well-formed upload.
//
// encoding/json cannot do this: it needs the whole string in memory.
func JSONFile(r io.Reader) io.Reader {
	j := &jsonFile{in: bufio.NewReaderSize(r, 64<<10)}
	j.str = &jsonString{j: j}
	return j
}

type jsonFile struct {
	in  *bufio.Reader
	off int64 // bytes consumed, for error messages
	str *jsonString
	b64 io.Reader // decodes str; nil until the opening quote is read
	err error     // sticky
}

func (j *jsonFile) Read(p []byte) (int, error) {
	if j.err != nil {
		return 0, j.err
	}
	if j.b64 == nil {
		if err := j.open(); err != nil {
			j.err = err
			return 0, err
		}
		j.b64 = base64.NewDecoder(base64.StdEncoding, j.str)
	}
	n, err := j.b64.Read(p)
	var corrupt base64.CorruptInputError
	switch {
	case err == io.EOF:
		err = j.close()
	case errors.Is(err, io.ErrUnexpectedEOF) && j.str.ended, errors.As(err, &corrupt):
		err = errorf("member \"file\" is not valid standard base64")
	}
	if err != nil {
		j.err = err
	}
	return n, err
}

// open reads up to and including the opening quote of the file's string.
func (j *jsonFile) open() error {
	if err := j.expect('{'); err != nil {
		return err
	}
	c, err := j.peekToken()
	if err != nil {
		return err
	}
	if c == '}' {
		return errorf("member \"file\" is missing")
	}
	if err := j.member(false); err != nil {
		return err
	}
	if err := j.expect(':'); err != nil {
		return err
	}
	if c, err = j.peekToken(); err != nil {
		return err
	}
	if c != '"' {
		return errorf("member \"file\" must be a string")
	}
	j.discard(1)
	return nil
}

// close checks what follows the file's string: the end of the object, then
// nothing but whitespace.
func (j *jsonFile) close() error {
	c, err := j.peekToken()
	if err != nil {
		return err
	}
	switch c {
	case ',':
		j.discard(1)
		return j.member(true)
	case '}':
		j.discard(1)
	default:
		return j.unexpected()
	}
	if _, err := j.skipSpace(); err != nil {
		return err // io.EOF: the body ends right after the object
	}
	return errorf("data after the JSON object at offset %d", j.off)
}

// ErrEnvelope is the *Error of a body that starts as a JWE in the JSON
// serialization does: an encrypted upload sent without X-Encryption: JWE,
// which the edge therefore passed on as it was.
var ErrEnvelope = &Error{msg: "the body is a JWE envelope, not {\"file\": \"<base64>\"}"}

// envelopeMembers are the members of a JWE in the JSON serialization
// (RFC 7516, section 7.2) and the edge's top-level kid.
var envelopeMembers = map[string]bool{"protected": true, "unprotected": true, "header": true, "encrypted_key": true,
	"iv": true, "ciphertext": true, "tag": true, "aad": true, "recipients": true, "kid": true}

// member reads a member name and accepts only "file", and only once.
func (j *jsonFile) member(seenFile bool) error {
	if err := j.expect('"'); err != nil {
		return err
	}
	// Longer names cannot be "file"; reading a bounded prefix is enough.
	const maxName = 32
	var name []byte
	for {
		b, err := j.stringByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(name) < maxName {
			name = append(name, b)
		}
	}
	switch {
	case envelopeMembers[string(name)]:
		return ErrEnvelope
	case string(name) != "file":
		// The name is not quoted: it may be a secret sent by mistake.
		return errorf("unknown member; the body must be {\"file\": \"<base64>\"}")
	case seenFile:
		return errorf("member \"file\" appears twice")
	}
	return nil
}

// stringByte returns the next byte of the JSON string being read, escapes
// decoded, or io.EOF at its closing quote. A \u escape outside ASCII
// yields its UTF-8 encoding's first byte only: good enough to compare names
// against "file" and never part of a valid upload.
func (j *jsonFile) stringByte() (byte, error) {
	b, err := j.in.ReadByte()
	if err != nil {
		return 0, j.eof(err)
	}
	j.off++
	switch {
	case b == '"':
		return 0, io.EOF
	case b < 0x20:
		return 0, errorf("control character in a string at offset %d", j.off-1)
	case b != '\\':
		return b, nil
	}
	e, err := j.in.ReadByte()
	if err != nil {
		return 0, j.eof(err)
	}
	j.off++
	switch e {
	case '"', '\\', '/':
		return e, nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		var hex [4]byte
		if _, err := io.ReadFull(j.in, hex[:]); err != nil {
			return 0, j.eof(err)
		}
		j.off += 4
		v, err := strconv.ParseUint(string(hex[:]), 16, 16)
		if err != nil {
			return 0, errorf("invalid \\u escape at offset %d", j.off-6)
		}
		if v < utf8.RuneSelf {
			return byte(v), nil
		}
		return 0xff, nil // not ASCII; see the doc comment
	}
	return 0, errorf("invalid escape at offset %d", j.off-2)
}

// peekToken skips whitespace and returns the next byte without consuming
// it. The end of the body is an *Error: the object is not complete.
func (j *jsonFile) peekToken() (byte, error) {
	b, err := j.skipSpace()
	if err != nil {
		return 0, j.eof(err)
	}
	return b, nil
}

// skipSpace skips whitespace and returns the next byte without consuming it.
func (j *jsonFile) skipSpace() (byte, error) {
	for {
		b, err := j.in.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			j.off++
			continue
		}
		return b, j.in.UnreadByte()
	}
}

// expect skips whitespace and consumes c.
func (j *jsonFile) expect(c byte) error {
	b, err := j.peekToken()
	if err != nil {
		return err
	}
	if b != c {
		return j.unexpected()
	}
	j.discard(1)
	return nil
}

func (j *jsonFile) discard(n int) {
	d, _ := j.in.Discard(n)
	j.off += int64(d)
}

func (j *jsonFile) unexpected() error {
	return errorf("invalid JSON at offset %d; the body must be {\"file\": \"<base64>\"}", j.off)
}

// eof turns the end of the body inside the object into an *Error and passes
// read errors through.
func (j *jsonFile) eof(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errorf("the JSON body ends early at offset %d", j.off)
	}
	return err
}

// jsonString reads the file's string up to its closing quote, decoding
// escapes and admitting only base64 characters, '=' only at the end.
type jsonString struct {
	j       *jsonFile
	ended   bool // the closing quote was read
	padding int  // '=' characters seen
}

// base64Chars is the standard alphabet; '=' is handled apart.
var base64Chars = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = true
	}
	return t
}()

func (s *jsonString) Read(p []byte) (int, error) {
	if s.ended {
		return 0, io.EOF
	}
	in := s.j.in
	n := 0
	for n < len(p) {
		// Fast path: copy a run of plain base64 characters from the buffer.
		if s.padding == 0 {
			if in.Buffered() == 0 && n > 0 {
				return n, nil // do not block while holding data
			}
			buf, _ := in.Peek(max(1, min(in.Buffered(), len(p)-n)))
			run := 0
			for run < len(buf) && base64Chars[buf[run]] {
				run++
			}
			copy(p[n:], buf[:run])
			n += run
			s.j.discard(run)
			if run > 0 {
				continue
			}
		}
		b, err := s.j.stringByte()
		switch {
		case err == io.EOF:
			s.ended = true
			return n, io.EOF
		case err != nil:
			return n, err
		case b == '=' && s.padding < 2:
			s.padding++
		case b == '=' || s.padding > 0 || !base64Chars[b]:
			return n, errorf("member \"file\" is not valid standard base64 (offset %d)", s.j.off-1)
		}
		p[n] = b
		n++
	}
	return n, nil
}
