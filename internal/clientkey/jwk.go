package clientkey

import (
	"encoding/base64"

	"github.com/health-data-connect/hdc/internal/jwe"
)

// JWK is a symmetric key as a JSON Web Key (RFC 7517, RFC 7518 §6.4): its
// content-encryption key in K, and the content encryption its envelopes
// use in Enc, beside the kid. It names no "alg": node-jose and the jose
// CLI read "alg":"dir" on a key as ruling out content encryption with it,
// and every library takes dir from the header.
type JWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Enc string `json:"enc"`
	K   string `json:"k"`
}

// JWK returns k as a JSON Web Key, which the JOSE libraries import as it
// is: an A256GCM key's secret is its k already (32 bytes in base64url), an
// A128CBC-HS256 key's is the shared string written twice, as the
// specification makes the 32 key bytes of it.
func (k *Key) JWK() JWK {
	enc, cek := k.ContentEncryption(), k.Secret
	if enc == jwe.EncA128CBCHS256 {
		cek = base64.RawURLEncoding.EncodeToString([]byte(k.Secret + k.Secret))
	}
	return JWK{Kty: "oct", Kid: k.Kid, Enc: enc, K: cek}
}
