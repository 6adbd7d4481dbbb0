package jwe

import (
	"bytes"
	"io"

	"github.com/health-data-connect/hdc/caddymodule/jwe/cbchmac"
)

// Form names the serializations a reader accepts.
type Form int

const (
	// Request is the flattened JSON serialization with a protected header
	// that names alg and enc: what clients send with Content-Type
	// application/json.
	Request Form = iota
	// Compact is the compact serialization (Content-Type application/jose).
	// Its key id can only come from the protected header.
	Compact
	// Flattened is any flattened JSON serialization: a request, or a response
	// without a protected header (its additional authenticated data is then
	// empty and alg and enc, when named, are in the unprotected header).
	Flattened
)

// Envelope is a parsed envelope without its ciphertext, which the reader
// writes elsewhere as it decodes it.
type Envelope struct {
	// Protected is the encoded protected header exactly as received; it is the
	// additional authenticated data. It is empty in a response envelope.
	Protected string
	// Header holds the parameters of the protected and unprotected headers.
	Header Header
	// Kid is the key id the envelope names, from the top-level member or a
	// header (all of which must agree), or "" when it names none.
	Kid  string
	IV   [cbchmac.IVSize]byte
	Tag  [cbchmac.TagSize]byte
	Size int64 // length of the decoded ciphertext
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
	if e.Size == 0 || e.Size%cbchmac.BlockSize != 0 {
		return nil, formatErr(`"ciphertext" must be a non-empty multiple of %d bytes`, cbchmac.BlockSize)
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

// Members of the flattened serialization, as bits of a set.
const (
	mProtected = 1 << iota
	mIV
	mCiphertext
	mTag
	mKid
	mEncryptedKey
	mUnprotected
	mHeader
)

var memberBits = map[string]int{
	"protected":     mProtected,
	"iv":            mIV,
	"ciphertext":    mCiphertext,
	"tag":           mTag,
	"kid":           mKid,
	"encrypted_key": mEncryptedKey,
	"unprotected":   mUnprotected,
	"header":        mHeader,
}

func (s *scanner) readJSON(ct io.Writer, requireProtected bool) (*Envelope, error) {
	e := &Envelope{}
	var (
		seen       int
		unprot     Header // the unprotected headers, merged
		unprotSeen params
		topKid     string
		iv, tag    []byte
		encKey     []byte
	)
	c, err := s.next()
	if err != nil {
		return nil, fail(err)
	}
	if c != '{' {
		return nil, formatErr("envelope is not a JSON object")
	}
	err = s.object(c, func(name []byte, c byte) error {
		bit, known := memberBits[string(name)]
		switch {
		case !known && (string(name) == "aad" || string(name) == "recipients"):
			return formatErr("member %q is not supported", name)
		case !known:
			return formatErr("unknown member in envelope")
		case seen&bit != 0:
			return formatErr("duplicate member %q", name)
		}
		seen |= bit
		if bit == mUnprotected || bit == mHeader {
			h, hs, err := s.readHeader(c, responseUnprotParams)
			if err != nil {
				return err
			}
			if hs&unprotSeen&^pKid != 0 {
				return formatErr("header parameters repeated across headers")
			}
			unprotSeen |= hs
			if err := mergeKid(&unprot.Kid, h.Kid); err != nil {
				return err
			}
			if h.Alg != "" {
				unprot.Alg = h.Alg
			}
			if h.Enc != "" {
				unprot.Enc = h.Enc
			}
			return nil
		}
		if c != '"' {
			return formatErr("%q must be a string", name)
		}
		var err error
		switch bit {
		case mProtected:
			var decoded []byte
			if e.Protected, decoded, err = s.readSmallB64("protected", maxHeaderText); err != nil {
				return err
			}
			e.Header, err = parseHeader(decoded)
		case mIV:
			_, iv, err = s.readSmallB64("iv", maxSmallB64)
		case mTag:
			_, tag, err = s.readSmallB64("tag", maxSmallB64)
		case mEncryptedKey:
			if _, encKey, err = s.readSmallB64("encrypted_key", maxSmallB64); err == nil && len(encKey) > 0 {
				err = formatErr(`"encrypted_key" must be empty with alg "dir"`)
			}
		case mKid:
			topKid, err = s.readText(maxKidText)
		case mCiphertext:
			e.Size, err = s.streamB64(ct, '"', "ciphertext")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := s.expectEnd(); err != nil {
		return nil, err
	}
	for _, m := range []struct {
		bit  int
		name string
	}{{mIV, "iv"}, {mCiphertext, "ciphertext"}, {mTag, "tag"}} {
		if seen&m.bit == 0 {
			return nil, formatErr("member %q is missing", m.name)
		}
	}
	hasProtected := seen&mProtected != 0
	switch {
	case requireProtected && !hasProtected:
		return nil, formatErr(`member "protected" is missing`)
	case hasProtected && unprotSeen&^requestUnprotParams != 0:
		// With a protected header, alg and enc belong there only.
		return nil, formatErr("unsupported header parameter")
	case !hasProtected:
		e.Header.Alg, e.Header.Enc = unprot.Alg, unprot.Enc
		if unprotSeen&(pAlg|pEnc) == 0 {
			// The response shape of the specification names no
			// algorithm; the transport has only one.
			e.Header.Alg, e.Header.Enc = AlgDir, EncA128CBCHS256
		}
	}
	e.Kid = e.Header.Kid
	if err := mergeKid(&e.Kid, unprot.Kid); err != nil {
		return nil, err
	}
	if err := mergeKid(&e.Kid, topKid); err != nil {
		return nil, err
	}
	if err := e.Header.checkAlgorithms(); err != nil {
		return nil, err
	}
	return e, e.setIVTag(iv, tag)
}

func (s *scanner) readCompact(ct io.Writer) (*Envelope, error) {
	e := &Envelope{}
	c, err := s.next()
	if err != nil {
		return nil, fail(err)
	}
	if err := s.br.UnreadByte(); err != nil {
		return nil, err
	}
	if c == '{' {
		return nil, formatErr("JSON envelope sent as application/jose")
	}
	var segs [3][]byte // protected, encrypted key, iv
	for i, max := range []int{maxHeaderText, maxSmallB64, maxSmallB64} {
		seg, found, err := s.readSegment('.', max)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, errSegments
		}
		segs[i] = seg
	}
	decoded, err := decodeB64("protected", segs[0])
	if err != nil {
		return nil, err
	}
	if e.Header, err = parseHeader(decoded); err != nil {
		return nil, err
	}
	if err := e.Header.checkAlgorithms(); err != nil {
		return nil, err
	}
	e.Protected, e.Kid = string(segs[0]), e.Header.Kid
	if len(segs[1]) > 0 {
		return nil, formatErr(`the encrypted key must be empty with alg "dir"`)
	}
	iv, err := decodeB64("iv", segs[2])
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

func (e *Envelope) setIVTag(iv, tag []byte) error {
	if len(iv) != cbchmac.IVSize {
		return formatErr(`"iv" must be %d bytes`, cbchmac.IVSize)
	}
	if len(tag) != cbchmac.TagSize {
		return formatErr(`"tag" must be %d bytes`, cbchmac.TagSize)
	}
	copy(e.IV[:], iv)
	copy(e.Tag[:], tag)
	return nil
}
