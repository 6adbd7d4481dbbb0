package jwe

import (
	"bytes"
	"unicode/utf8"
)

// Header holds the JOSE header parameters of an envelope. Only parameters
// from a fixed list are accepted, strings but iat; anything else could
// change how the message must be processed and is refused.
type Header struct {
	Alg string `json:"alg,omitempty"`
	Enc string `json:"enc,omitempty"`
	Kid string `json:"kid,omitempty"`
	Typ string `json:"typ,omitempty"`
	Cty string `json:"cty,omitempty"`
	// Iat is when the request was made, in seconds since the Unix epoch
	// (a NumericDate, RFC 7519 §2, of whole seconds); 0 when not named.
	Iat int64 `json:"iat,omitempty"`
	// Jti names the request uniquely under its key, for the replay check.
	Jti string `json:"jti,omitempty"`
}

// params is a set of header parameters, as bits.
type params uint8

const (
	pAlg params = 1 << iota
	pEnc
	pKid
	pTyp
	pCty
	pIat
	pJti
)

// Parameters each header may carry. The protected header names the
// algorithms; beside it, unprotected headers may only name the key. The
// first version's responses had no protected header, so their unprotected
// one names the algorithms too.
const (
	protectedParams      = pAlg | pEnc | pKid | pTyp | pCty | pIat | pJti
	requestUnprotParams  = pKid
	responseUnprotParams = pAlg | pEnc | pKid
)

// field returns the parameter named name and where its value goes.
func (h *Header) field(name []byte) (params, *string) {
	switch string(name) {
	case "alg":
		return pAlg, &h.Alg
	case "enc":
		return pEnc, &h.Enc
	case "kid":
		return pKid, &h.Kid
	case "typ":
		return pTyp, &h.Typ
	case "cty":
		return pCty, &h.Cty
	case "jti":
		return pJti, &h.Jti
	case "iat":
		return pIat, nil
	}
	return 0, nil
}

// readHeader reads a JSON object of string members whose first byte, first,
// has been read, refusing duplicates, members outside allowed, and the
// parameters that would change processing. It returns the parameters seen.
func (s *scanner) readHeader(first byte, allowed params) (Header, params, error) {
	var (
		h    Header
		seen params
	)
	err := s.object(first, func(name []byte, value byte) error {
		switch string(name) {
		case "zip":
			return formatErr(`header parameter "zip" is not supported`)
		case "crit":
			return formatErr(`header parameter "crit" is not supported`)
		}
		p, dst := h.field(name)
		switch {
		case p == 0:
			return formatErr("header parameter %q is not supported", name)
		case p&allowed == 0:
			return formatErr("header parameter %q may only be in the protected header", name)
		case seen&p != 0:
			return formatErr("duplicate header parameter %q", name)
		case p == pIat:
			seen |= p
			var err error
			h.Iat, err = s.readSeconds(value)
			return err
		case value != '"':
			return formatErr("header parameter %q must be a string", name)
		}
		seen |= p
		text, err := s.readText(maxKidText)
		*dst = text
		return err
	})
	return h, seen, err
}

// parseHeader decodes a protected header: a JSON object, in UTF-8, with
// nothing after it.
func parseHeader(data []byte) (Header, error) {
	if !utf8.Valid(data) {
		return Header{}, formatErr("header is not valid UTF-8")
	}
	s := newScanner(bytes.NewReader(data), int64(len(data)))
	defer s.release()
	c, err := s.next()
	if err != nil {
		return Header{}, errNotObject
	}
	h, _, err := s.readHeader(c, protectedParams)
	if err == nil {
		err = s.expectEnd()
	}
	if err != nil {
		return Header{}, err
	}
	return h, nil
}

// checkAlgorithms enforces the allow-list of alg and enc values.
func (h Header) checkAlgorithms() error {
	if h.Alg != AlgDir {
		return formatErr(`unsupported "alg": only %q is accepted`, AlgDir)
	}
	if !ValidEnc(h.Enc) {
		return formatErr(`unsupported "enc": only %q and %q are accepted`, EncA128CBCHS256, EncA256GCM)
	}
	return nil
}

// maxSecondsDigits bounds an iat: twelve digits reach the year 33658.
const maxSecondsDigits = 12

// readSeconds reads a NumericDate of whole seconds whose first byte, first,
// has been read: a positive JSON integer without sign, fraction or
// exponent.
func (s *scanner) readSeconds(first byte) (int64, error) {
	errIat := formatErr(`header parameter "iat" must be a positive whole number of seconds`)
	if first < '1' || first > '9' {
		return 0, errIat
	}
	n := int64(first - '0')
	for digits := 1; ; digits++ {
		c, err := s.br.ReadByte()
		if err != nil {
			return 0, fail(err)
		}
		if c < '0' || c > '9' {
			if c == '.' || c == 'e' || c == 'E' {
				return 0, errIat
			}
			return n, s.br.UnreadByte()
		}
		if digits == maxSecondsDigits {
			return 0, errIat
		}
		n = n*10 + int64(c-'0')
	}
}

// mergeKid folds one more source of the key id into kid; every source that
// names one must name the same.
func mergeKid(kid *string, other string) error {
	if other == "" {
		return nil
	}
	if *kid != "" && *kid != other {
		return formatErr("kid members disagree")
	}
	*kid = other
	return nil
}
