package tokenauth

import (
	"context"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// FuzzParseJWKS feeds arbitrary documents to the JWK Set parser. It must not
// panic, and whatever it accepts must hold only well-formed Ed25519 keys
// with a kid.
func FuzzParseJWKS(f *testing.F) {
	a, b := testkit.NewSigner("a"), testkit.NewSigner("b")
	f.Add(testkit.JWKS(a))
	f.Add(testkit.JWKS(a, b))
	f.Add([]byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","kid":"r"},{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"k","key_ops":["verify"]}]}`))
	f.Add([]byte(`{"keys":[1,null,{"kid":7}]}`))
	f.Add([]byte(`{"keys":{}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := parseJWKS(data)
		if err != nil {
			if set != nil {
				t.Fatal("a set returned with an error")
			}
			return
		}
		for kid, k := range set {
			if kid == "" || len(k) != ed25519.PublicKeySize {
				t.Fatalf("accepted kid %q with a %d-byte key", kid, len(k))
			}
		}
	})
}

// staticKeys is a KeySource of fixed keys.
type staticKeys map[string]ed25519.PublicKey

func (s staticKeys) Key(_ context.Context, kid string) (ed25519.PublicKey, error) {
	if k, ok := s[kid]; ok {
		return k, nil
	}
	return nil, ErrUnknownKey
}

// FuzzVerify feeds arbitrary strings to Verify in both modes. It must not
// panic, must refuse with one of the package's errors whose text does not
// quote the token, and may accept only the genuine tokens it was seeded
// with: any change to a signed token must be refused.
func FuzzVerify(f *testing.F) {
	k := testkit.NewSigner("k1")
	now := epoch
	c := claimsAt(now)
	c["aud"] = []string{"x", DefaultAudience}
	genuine := []string{k.Token(claimsAt(now)), k.Token(c)}
	for _, tok := range genuine {
		f.Add(tok, false)
		f.Add(tok, true)
	}
	f.Add(testkit.Sign(jwt.SigningMethodHS256, []byte(k.Pub), map[string]any{"kid": "k1"}, claimsAt(now)), false)
	f.Add(testkit.Sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, map[string]any{"kid": "k1"}, claimsAt(now)), false)
	f.Add("eyJhbGciOiJFZERTQSIsImtpZCI6ImsxIn0.e30.", true)
	f.Add("", false)
	v, err := NewVerifier(staticKeys{"k1": k.Pub}, VerifierOptions{Now: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string, refresh bool) {
		mode := ModeAccess
		if refresh {
			mode = ModeRefresh
		}
		claims, err := v.Verify(context.Background(), token, mode)
		if err == nil {
			for _, g := range genuine {
				if token == g {
					if claims.Subject != "client-1" || claims.KeyID != "k1" {
						t.Fatalf("claims = %+v", claims)
					}
					return
				}
			}
			t.Fatalf("accepted a token that was never signed: %q", token)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v is not a *tokenauth.Error", err)
		}
		if len(token) >= 8 && strings.Contains(err.Error(), token) {
			t.Fatalf("error %q quotes the token", err)
		}
	})
}

// FuzzBearerToken feeds arbitrary Authorization values to BearerToken. What
// it accepts must be the value minus "Bearer ", and contain no space.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc.def.ghi", "bearer a==", "Bearer  a", "Basic x", "", "Bearer a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		tok, err := BearerToken(header)
		if err != nil {
			if !errors.Is(err, ErrMissing) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if !strings.EqualFold(header[:7], "Bearer ") || header[7:] != tok || tok == "" || strings.ContainsAny(tok, " \t,") {
			t.Fatalf("BearerToken(%q) = %q", header, tok)
		}
	})
}
