package jwe

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
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

// Parameters each header may carry. A request's protected header names the
// algorithms; its unprotected headers may only name the key. A response has
// no protected header, so its unprotected one names everything.
var (
	protectedParams      = []string{"alg", "enc", "kid", "typ", "cty"}
	requestUnprotParams  = []string{"kid"}
	responseUnprotParams = []string{"alg", "enc", "kid"}
)

// parseHeader decodes a JSON object of string members, refusing duplicates,
// members outside allowed, and the parameters that would change processing.
func parseHeader(data []byte, allowed []string) (Header, error) {
	var h Header
	if !utf8.Valid(data) {
		return h, formatErr("header is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return h, formatErr("header is not a JSON object")
	}
	seen := make(map[string]bool, 4)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return h, formatErr("header is not a JSON object")
		}
		name := tok.(string) // object keys are always strings
		switch {
		case name == "zip":
			return h, formatErr(`header parameter "zip" is not supported`)
		case name == "crit":
			return h, formatErr(`header parameter "crit" is not supported`)
		case !slices.Contains(allowed, name):
			return h, formatErr("unsupported header parameter")
		case seen[name]:
			return h, formatErr("duplicate header parameter %q", name)
		}
		seen[name] = true
		if len(seen) > maxHeaderMembers {
			return h, formatErr("header has too many parameters")
		}
		tok, err = dec.Token()
		value, ok := tok.(string)
		if err != nil || !ok {
			return h, formatErr("header parameter %q must be a string", name)
		}
		switch name {
		case "alg":
			h.Alg = value
		case "enc":
			h.Enc = value
		case "kid":
			h.Kid = value
		case "typ":
			h.Typ = value
		case "cty":
			h.Cty = value
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return h, formatErr("header is not a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return h, formatErr("header has trailing data")
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
