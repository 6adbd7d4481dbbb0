package jwe

import (
	"bytes"
	"unicode/utf8"
)

// Header holds the JOSE header parameters of an envelope. Only string
// parameters from a fixed list are accepted; anything else could change how
// the message must be processed and is refused.
type Header struct {
	Alg string `json:"alg,omitempty"`
	Enc string `json:"enc,omitempty"`
	Kid string `json:"kid,omitempty"`
	Typ string `json:"typ,omitempty"`
	Cty string `json:"cty,omitempty"`
}

// params is a set of header parameters, as bits.
type params uint8

const (
	pAlg params = 1 << iota
	pEnc
	pKid
	pTyp
	pCty
)

// Parameters each header may carry. The protected header names the
// algorithms; beside it, unprotected headers may only name the key. The
// first version's responses had no protected header, so their unprotected
// one names the algorithms too.
const (
	protectedParams      = pAlg | pEnc | pKid | pTyp | pCty
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
	if h.Enc != EncA128CBCHS256 {
		return formatErr(`unsupported "enc": only %q is accepted`, EncA128CBCHS256)
	}
	return nil
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
