package jwe

import "io"

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
	mRecipients
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
	"recipients":    mRecipients,
}

// jsonEnvelope gathers the members of a flattened JSON envelope as the
// scanner reads them, then checks them together.
type jsonEnvelope struct {
	e          Envelope
	ct         io.Writer // where the ciphertext is decoded to
	seen       int       // members read, as bits
	unprot     Header    // the unprotected headers, merged
	unprotSeen params
	topKid     string
	iv, tag    []byte
}

func (s *scanner) readJSON(ct io.Writer, requireProtected bool) (*Envelope, error) {
	c, err := s.next()
	if err != nil {
		return nil, fail(err)
	}
	if c != '{' {
		return nil, formatErr("envelope is not a JSON object")
	}
	j := &jsonEnvelope{ct: ct}
	if err := s.object(c, func(name []byte, c byte) error { return j.member(s, name, c) }); err != nil {
		return nil, err
	}
	if err := s.expectEnd(); err != nil {
		return nil, err
	}
	return j.finish(requireProtected)
}

// member reads the value of the member name, whose first byte is c.
func (j *jsonEnvelope) member(s *scanner, name []byte, c byte) error {
	bit, known := memberBits[string(name)]
	switch {
	case !known && string(name) == "aad":
		return formatErr(`member "aad" is not supported`)
	case !known:
		return formatErr("unknown member in envelope")
	case j.seen&bit != 0:
		return formatErr("duplicate member %q", name)
	}
	j.seen |= bit
	switch bit {
	case mUnprotected, mHeader:
		return j.header(s, c)
	case mRecipients:
		return j.recipients(s, c)
	}
	if c != '"' {
		return formatErr("%q must be a string", name)
	}
	var err error
	switch bit {
	case mProtected:
		var decoded []byte
		if j.e.AAD, decoded, err = s.readSmallB64("protected", maxHeaderText); err != nil {
			return err
		}
		j.e.Header, err = parseHeader(decoded)
	case mIV:
		_, j.iv, err = s.readSmallB64("iv", maxSmallB64)
	case mTag:
		_, j.tag, err = s.readSmallB64("tag", maxSmallB64)
	case mEncryptedKey:
		var encKey []byte
		if _, encKey, err = s.readSmallB64("encrypted_key", maxSmallB64); err == nil && len(encKey) > 0 {
			err = formatErr(`"encrypted_key" must be empty with alg "dir"`)
		}
	case mKid:
		j.topKid, err = s.readText(maxKidText)
	case mCiphertext:
		j.e.Size, err = s.streamB64(j.ct, '"', "ciphertext")
	}
	return err
}

// recipients reads the general serialization's "recipients": alg "dir"
// has one key, so exactly one recipient, whose "encrypted_key", if any, is
// empty and whose "header", if any, is read as the flattened form's. The
// envelope is then the same JWE as the flattened one (RFC 7516 §7.2.2).
func (j *jsonEnvelope) recipients(s *scanner, c byte) error {
	if c != '[' {
		return formatErr(`"recipients" must be an array`)
	}
	c, err := s.next()
	if err != nil {
		return fail(err)
	}
	if c == ']' {
		return formatErr(`"recipients" is empty`)
	}
	err = s.object(c, func(name []byte, v byte) error {
		if n := string(name); n != "header" && n != "encrypted_key" {
			return formatErr(`a recipient may only have "header" and "encrypted_key"`)
		}
		return j.member(s, name, v)
	})
	if err != nil {
		return err
	}
	switch c, err = s.next(); {
	case err != nil:
		return fail(err)
	case c == ',':
		return formatErr(`"recipients" must hold one recipient: alg "dir" has one key`)
	case c != ']':
		return errMalformed
	}
	return nil
}

// header reads an unprotected header (the shared "unprotected" one or the
// recipient's "header") and merges it with the other one.
func (j *jsonEnvelope) header(s *scanner, c byte) error {
	h, hs, err := s.readHeader(c, responseUnprotParams)
	if err != nil {
		return err
	}
	if hs&j.unprotSeen&^pKid != 0 {
		return formatErr("header parameters repeated across headers")
	}
	j.unprotSeen |= hs
	if err := mergeKid(&j.unprot.Kid, h.Kid); err != nil {
		return err
	}
	if h.Alg != "" {
		j.unprot.Alg = h.Alg
	}
	if h.Enc != "" {
		j.unprot.Enc = h.Enc
	}
	return nil
}

// finish checks what was read as a whole: required members, where the
// algorithms are named, and that every kid agrees.
func (j *jsonEnvelope) finish(requireProtected bool) (*Envelope, error) {
	for _, m := range []struct {
		bit  int
		name string
	}{{mIV, "iv"}, {mCiphertext, "ciphertext"}, {mTag, "tag"}} {
		if j.seen&m.bit == 0 {
			return nil, formatErr("member %q is missing", m.name)
		}
	}
	e := &j.e
	hasProtected := j.seen&mProtected != 0
	switch {
	case requireProtected && !hasProtected:
		return nil, formatErr(`member "protected" is missing`)
	case hasProtected && j.unprotSeen&^requestUnprotParams != 0:
		return nil, misplaced(j.unprotSeen&^requestUnprotParams, e.Header)
	case !hasProtected:
		e.Header.Alg, e.Header.Enc = j.unprot.Alg, j.unprot.Enc
		if j.unprotSeen&(pAlg|pEnc) == 0 {
			// The response shape of the specification names no
			// algorithm; the transport has only one.
			e.Header.Alg, e.Header.Enc = AlgDir, EncA128CBCHS256
		}
	}
	e.Kid = e.Header.Kid
	if err := mergeKid(&e.Kid, j.unprot.Kid); err != nil {
		return nil, err
	}
	if err := mergeKid(&e.Kid, j.topKid); err != nil {
		return nil, err
	}
	if err := e.Header.checkAlgorithms(); err != nil {
		return nil, err
	}
	return e, e.setIVTag(j.iv, j.tag)
}

// misplaced describes header parameters ps (alg or enc) of an unprotected
// header beside a protected one: they belong in the protected header alone,
// the one the tag covers, and a parameter may not be in two headers (RFC
// 7516 §7.2.1), which some libraries do by default.
func misplaced(ps params, protected Header) error {
	name, value := "enc", protected.Enc
	if ps&pAlg != 0 {
		name, value = "alg", protected.Alg
	}
	if value != "" {
		return formatErr(`header parameter %q is in the protected header and in an unprotected one ("header" or "unprotected"); `+
			`RFC 7516 §7.2.1 requires the headers to be disjoint: name it in "protected" only`, name)
	}
	return formatErr(`header parameter %q must be in the protected header, which the tag covers, not in "header" or "unprotected"`, name)
}
