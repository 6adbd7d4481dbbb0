package testkit

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer and audience of the tokens the stack issues by default.
const (
	Issuer   = "health-data-connect"
	Audience = "health-data-connect-api"
)

// Signer is an Ed25519 signing key with its kid: it mints access tokens as
// the backend does, and publishes its public key as a JWK.
type Signer struct {
	Kid  string
	Pub  ed25519.PublicKey
	Priv ed25519.PrivateKey
}

// NewSigner returns a fresh key named kid.
func NewSigner(kid string) *Signer {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return &Signer{Kid: kid, Pub: pub, Priv: priv}
}

// JWK returns the public key as a member of a JWK Set.
func (s *Signer) JWK() map[string]any {
	return map[string]any{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig",
		"kid": s.Kid, "x": base64.RawURLEncoding.EncodeToString(s.Pub)}
}

// JWKS returns the JWK Set document of signers' public keys.
func JWKS(signers ...*Signer) []byte {
	set := []map[string]any{}
	for _, s := range signers {
		set = append(set, s.JWK())
	}
	b, err := json.Marshal(map[string]any{"keys": set})
	if err != nil {
		panic(err)
	}
	return b
}

// Claims returns the claims of a valid access token of client in workspace
// ws, issued at now for 30 minutes, with token id jti.
func Claims(client, ws, jti string, now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"iss": Issuer, "aud": Audience, "sub": client, "ws": ws, "jti": jti,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(30 * time.Minute).Unix(),
	}
}

// Token returns an EdDSA token of claims signed by s, with its kid.
func (s *Signer) Token(claims jwt.MapClaims) string {
	return Sign(jwt.SigningMethodEdDSA, s.Priv, map[string]any{"kid": s.Kid}, claims)
}

// Sign returns a token of claims signed with method and key, whose header
// is the library's plus header (a nil value deletes a member): forged and
// malformed tokens for tests of the verifier.
func Sign(method jwt.SigningMethod, key any, header map[string]any, claims jwt.MapClaims) string {
	tok := jwt.NewWithClaims(method, claims)
	for name, v := range header {
		if v == nil {
			delete(tok.Header, name)
		} else {
			tok.Header[name] = v
		}
	}
	s, err := tok.SignedString(key)
	if err != nil {
		panic(err)
	}
	return s
}

// With returns a copy of claims changed by override: a nil value removes
// the claim.
func With(claims jwt.MapClaims, override map[string]any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for k, v := range claims {
		out[k] = v
	}
	for k, v := range override {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}
