package jwe

import (
	"bytes"
	"io"

	"github.com/health-data-connect/hdc/internal/jwe/cbchmac"
)

// Form names the serializations a reader accepts.
type Form int

const (
	// Request is the JSON serialization with a protected header that names
	// alg and enc: what clients send with Content-Type application/json or
	// application/jose+json. It is the flattened syntax, or the general
	// one with a single recipient (RFC 7516 §7.2.2), which is the same JWE.
	Request Form = iota
	// Compact is the compact serialization (Content-Type application/jose).
	// Its key id can only come from the protected header.
	Compact
	// Flattened is any JSON serialization: a request, a response (whose
	// protected header names the key), or the response shape of the
	// first version of this API, without a protected header (its
	// additional authenticated data is then empty and alg and enc, when
	// named, are in the unprotected header).
	Flattened
)

// Envelope is a parsed envelope without its ciphertext, which the reader
// writes elsewhere as it decodes it.
type Envelope struct {
	// Sealed describes the ciphertext to package cbchmac: its AAD is the
	// encoded protected header exactly as received (empty when there is
	// none), then the iv, the tag, and the length of the decoded ciphertext.
	cbchmac.Sealed
	// Header holds the parameters of the protected and unprotected headers.
	Header Header
	// Kid is the key id the envelope names, from the top-level member or a
	// header (all of which must agree), or "" when it names none.
	Kid string
	// nonce is the iv of an A256GCM envelope; Sealed.IV is an
	// A128CBC-HS256 envelope's.
	nonce [GCMNonceSize]byte
}

// Read parses an envelope of the given form from r, reading at most limit
// bytes, and writes the decoded ciphertext to ct as it goes. Every check that
// needs no key is done here: strict base64url, lengths of iv, tag and
// ciphertext, duplicate and unknown members, and the alg and enc allow-list.
// On error, ct may have received part of the ciphertext and must be dropped.
func Read(r io.Reader, form Form, ct io.Writer, limit int64) (*Envelope, error) {
	s := newScanner(r, limit)
	defer s.release()
	var (
		e   *Envelope
		err error
	)
	if form == Compact {
		e, err = s.readCompact(ct)
	} else {
		e, err = s.readJSON(ct, form == Request)
	}
	if err != nil {
		return nil, err
	}
	if e.Header.Enc == EncA128CBCHS256 && (e.Size == 0 || e.Size%cbchmac.BlockSize != 0) {
		return nil, formatErr(`"ciphertext" must be a non-empty multiple of %d bytes with %s`, cbchmac.BlockSize, EncA128CBCHS256)
	}
	return e, nil
}

// Parse parses an envelope held in memory and returns it with its ciphertext.
func Parse(data []byte, form Form) (*Envelope, []byte, error) {
	var ct bytes.Buffer
	ct.Grow(len(data) / 4 * 3)
	e, err := Read(bytes.NewReader(data), form, &ct, int64(len(data)))
	if err != nil {
		return nil, nil, err
	}
	return e, ct.Bytes(), nil
}

func (s *scanner) readCompact(ct io.Writer) (*Envelope, error) {
	e, iv, err := s.compactHead()
	if err != nil {
		return nil, err
	}
	if e.Size, err = s.streamB64(ct, '.', "ciphertext"); err != nil {
		return nil, err
	}
	seg, _, err := s.readSegment(0, maxSmallB64)
	if err != nil {
		return nil, err
	}
	tag, err := decodeB64("tag", seg)
	if err != nil {
		return nil, err
	}
	return e, e.setIVTag(iv, tag)
}

// compactHead reads the compact segments before the ciphertext: the
// protected header (checked), the encrypted key (empty with "dir") and the
// iv, which it returns decoded.
func (s *scanner) compactHead() (*Envelope, []byte, error) {
	c, err := s.next()
	if err != nil {
		return nil, nil, fail(err)
	}
	if err := s.br.UnreadByte(); err != nil {
		return nil, nil, err
	}
	if c == '{' {
		return nil, nil, formatErr("JSON envelope sent as application/jose")
	}
	var segs [3][]byte // protected, encrypted key, iv
	for i, max := range []int{maxHeaderText, maxSmallB64, maxSmallB64} {
		seg, found, err := s.readSegment('.', max)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			return nil, nil, errSegments
		}
		segs[i] = seg
	}
	e := &Envelope{Sealed: cbchmac.Sealed{AAD: string(segs[0])}}
	decoded, err := decodeB64("protected", segs[0])
	if err == nil {
		e.Header, err = parseHeader(decoded)
	}
	if err == nil {
		err = e.Header.checkAlgorithms()
	}
	if err != nil {
		return nil, nil, err
	}
	e.Kid = e.Header.Kid
	if len(segs[1]) > 0 {
		return nil, nil, formatErr(`the encrypted key must be empty with alg "dir"`)
	}
	iv, err := decodeB64("iv", segs[2])
	return e, iv, err
}

// setIVTag checks the iv's and the tag's lengths for the envelope's enc and
// keeps them.
func (e *Envelope) setIVTag(iv, tag []byte) error {
	ivSize, dst := cbchmac.IVSize, e.IV[:]
	if e.Header.Enc == EncA256GCM {
		ivSize, dst = GCMNonceSize, e.nonce[:]
	}
	if len(iv) != ivSize {
		return formatErr(`"iv" must be %d bytes with %s`, ivSize, e.Header.Enc)
	}
	if len(tag) != cbchmac.TagSize {
		return formatErr(`"tag" must be %d bytes`, cbchmac.TagSize)
	}
	copy(dst, iv)
	copy(e.Tag[:], tag)
	return nil
}
