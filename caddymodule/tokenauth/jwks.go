package tokenauth

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// maxJWKSSize bounds a JWK Set document, fetched or read from a file. The
// backend's set holds a handful of keys and weighs well under a kilobyte.
const maxJWKSSize = 1 << 20

// keySet is an immutable set of verification keys by kid.
type keySet map[string]ed25519.PublicKey

// jwk holds the members of a JSON Web Key (RFC 7517 §4, RFC 8037 §2) that
// decide whether it is an Ed25519 verification key.
type jwk struct {
	Kty    string   `json:"kty"`
	Crv    string   `json:"crv"`
	X      string   `json:"x"`
	Kid    string   `json:"kid"`
	Alg    string   `json:"alg"`
	Use    string   `json:"use"`
	KeyOps []string `json:"key_ops"`
}

// parseJWKS decodes a JWK Set (RFC 7517 §5) and keeps its Ed25519 signature
// verification keys that have a kid. Other keys (other types, curves or
// uses, or malformed members) are skipped, as RFC 7517 §5 recommends, so that
// the backend may publish more than this package understands. The document
// itself must be a JSON object with a "keys" array, and a kid may not name
// two usable keys: that would make the key of a token ambiguous.
//
// It is hand-written rather than go-jose's JSONWebKeySet because that type
// refuses the whole set for one key it does not understand, and parses
// certificate chains and RSA and EC keys that are never used here.
func parseJWKS(data []byte) (keySet, error) {
	if len(data) > maxJWKSSize {
		return nil, fmt.Errorf("tokenauth: JWK Set larger than %d bytes", maxJWKSSize)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("tokenauth: JWK Set is not valid: %w", err)
	}
	if doc.Keys == nil {
		return nil, errors.New(`tokenauth: JWK Set has no "keys" array`)
	}
	set := make(keySet, len(doc.Keys))
	for _, raw := range doc.Keys {
		var k jwk
		if json.Unmarshal(raw, &k) != nil {
			continue
		}
		pub, ok := k.ed25519()
		if !ok {
			continue
		}
		if _, dup := set[k.Kid]; dup {
			return nil, fmt.Errorf("tokenauth: JWK Set has two keys with kid %q", k.Kid)
		}
		set[k.Kid] = pub
	}
	return set, nil
}

// ed25519 returns the key if k is an Ed25519 public key with a kid that may
// verify EdDSA signatures.
func (k *jwk) ed25519() (ed25519.PublicKey, bool) {
	if k.Kty != "OKP" || k.Crv != "Ed25519" || k.Kid == "" ||
		(k.Alg != "" && k.Alg != "EdDSA") ||
		(k.Use != "" && k.Use != "sig") ||
		(k.KeyOps != nil && !slices.Contains(k.KeyOps, "verify")) {
		return nil, false
	}
	x, err := base64.RawURLEncoding.Strict().DecodeString(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return nil, false
	}
	return ed25519.PublicKey(x), true
}

// readJWKS reads a JWK Set document of at most maxJWKSSize bytes from r and
// parses it.
func readJWKS(r io.Reader) (keySet, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxJWKSSize+1))
	if err != nil {
		return nil, err
	}
	return parseJWKS(data)
}
