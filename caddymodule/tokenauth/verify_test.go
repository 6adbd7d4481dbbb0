package tokenauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/health-data-connect/hdc/internal/testkit"
)

func TestVerify(t *testing.T) {
	f := newFixture(t, VerifierOptions{CacheSize: -1})
	k := f.key
	now := f.clock.Now()
	other := testkit.NewSigner("k1") // same kid, another key
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}

	// with returns valid claims changed by edit.
	with := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := claimsAt(now)
		edit(c)
		return c
	}
	without := func(name string) jwt.MapClaims {
		return with(func(c jwt.MapClaims) { delete(c, name) })
	}
	valid := k.Token(claimsAt(now))
	expired := k.Token(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() }))
	parts := strings.Split(valid, ".")
	otherPayload := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"health-data-connect","aud":"health-data-connect-api","sub":"admin","ws":"ws-2","jti":"x","exp":9999999999}`))
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[len(sig)/2] ^= 1
	flippedSig := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)

	tests := []struct {
		name  string
		token string
		mode  Mode
		want  error // nil: accepted
	}{
		{"valid", valid, ModeAccess, nil},
		{"expired", expired, ModeAccess, ErrExpired},
		{"expired within leeway", k.Token(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-20 * time.Second).Unix() })), ModeAccess, nil},
		{"expired just past leeway", k.Token(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-DefaultLeeway).Unix() })), ModeAccess, ErrExpired},
		{"nbf in the future", k.Token(with(func(c jwt.MapClaims) { c["nbf"] = now.Add(5 * time.Minute).Unix() })), ModeAccess, ErrNotYetValid},
		{"nbf within leeway", k.Token(with(func(c jwt.MapClaims) { c["nbf"] = now.Add(20 * time.Second).Unix() })), ModeAccess, nil},
		{"iat in the future", k.Token(with(func(c jwt.MapClaims) { c["iat"] = now.Add(5 * time.Minute).Unix() })), ModeAccess, ErrNotYetValid},
		{"no nbf, no iat", k.Token(with(func(c jwt.MapClaims) { delete(c, "nbf"); delete(c, "iat") })), ModeAccess, nil},
		{"wrong iss", k.Token(with(func(c jwt.MapClaims) { c["iss"] = "someone-else" })), ModeAccess, ErrClaims},
		{"wrong aud", k.Token(with(func(c jwt.MapClaims) { c["aud"] = "other-api" })), ModeAccess, ErrClaims},
		{"aud array with ours", k.Token(with(func(c jwt.MapClaims) { c["aud"] = []string{"other-api", DefaultAudience} })), ModeAccess, nil},
		{"aud array without ours", k.Token(with(func(c jwt.MapClaims) { c["aud"] = []string{"a", "b"} })), ModeAccess, ErrClaims},
		{"aud empty string", k.Token(with(func(c jwt.MapClaims) { c["aud"] = "" })), ModeAccess, ErrClaims},
		{"missing iss", k.Token(without("iss")), ModeAccess, ErrClaims},
		{"missing aud", k.Token(without("aud")), ModeAccess, ErrClaims},
		{"missing sub", k.Token(without("sub")), ModeAccess, ErrClaims},
		{"missing ws", k.Token(without("ws")), ModeAccess, ErrClaims},
		{"empty ws", k.Token(with(func(c jwt.MapClaims) { c["ws"] = "" })), ModeAccess, ErrClaims},
		{"missing jti", k.Token(without("jti")), ModeAccess, ErrClaims},
		{"missing exp", k.Token(without("exp")), ModeAccess, ErrClaims},
		{"ws not a string", k.Token(with(func(c jwt.MapClaims) { c["ws"] = 7 })), ModeAccess, ErrMalformed},
		{"exp not a number", k.Token(with(func(c jwt.MapClaims) { c["exp"] = "tomorrow" })), ModeAccess, ErrMalformed},
		{"alg none", testkit.Sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, map[string]any{"kid": k.Kid}, claimsAt(now)), ModeAccess, ErrBadSignature},
		{"HS256 with the public key bytes", testkit.Sign(jwt.SigningMethodHS256, []byte(k.Pub), map[string]any{"kid": k.Kid}, claimsAt(now)), ModeAccess, ErrBadSignature},
		{"HS256 with the x member", testkit.Sign(jwt.SigningMethodHS256, []byte(base64.RawURLEncoding.EncodeToString(k.Pub)), map[string]any{"kid": k.Kid}, claimsAt(now)), ModeAccess, ErrBadSignature},
		{"RS256", testkit.Sign(jwt.SigningMethodRS256, rsaKey, map[string]any{"kid": k.Kid}, claimsAt(now)), ModeAccess, ErrBadSignature},
		{"ES256", testkit.Sign(jwt.SigningMethodES256, ecKey, map[string]any{"kid": k.Kid}, claimsAt(now)), ModeAccess, ErrBadSignature},
		{"EdDSA by another key", other.Token(claimsAt(now)), ModeAccess, ErrBadSignature},
		{"tampered payload", parts[0] + "." + otherPayload + "." + parts[2], ModeAccess, ErrBadSignature},
		{"tampered signature", flippedSig, ModeAccess, ErrBadSignature},
		{"no signature", parts[0] + "." + parts[1] + ".", ModeAccess, ErrBadSignature},
		{"padded signature", valid + "==", ModeAccess, ErrMalformed},
		{"no kid", testkit.Sign(jwt.SigningMethodEdDSA, k.Priv, map[string]any{}, claimsAt(now)), ModeAccess, ErrMalformed},
		{"kid not a string", testkit.Sign(jwt.SigningMethodEdDSA, k.Priv, map[string]any{"kid": 1}, claimsAt(now)), ModeAccess, ErrMalformed},
		{"crit header", testkit.Sign(jwt.SigningMethodEdDSA, k.Priv, map[string]any{"kid": k.Kid, "crit": []string{"exp"}}, claimsAt(now)), ModeAccess, ErrMalformed},
		{"unknown kid", testkit.NewSigner("k9").Token(claimsAt(now)), ModeAccess, ErrUnknownKey},
		{"two segments", parts[0] + "." + parts[1], ModeAccess, ErrMalformed},
		{"four segments", valid + ".x", ModeAccess, ErrMalformed},
		{"not base64", "a!b.c.d", ModeAccess, ErrMalformed},
		{"too long", valid + strings.Repeat("A", MaxTokenSize), ModeAccess, ErrMalformed},
		{"empty", "", ModeAccess, ErrMissing},

		{"refresh: valid", valid, ModeRefresh, nil},
		{"refresh: expired an hour ago", expired, ModeRefresh, nil},
		{"refresh: expired 29 days ago", k.Token(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-29 * 24 * time.Hour).Unix() })), ModeRefresh, nil},
		{"refresh: expired 31 days ago", k.Token(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-31 * 24 * time.Hour).Unix() })), ModeRefresh, ErrExpired},
		{"refresh: forged", other.Token(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() })), ModeRefresh, ErrBadSignature},
		{"refresh: HS256", testkit.Sign(jwt.SigningMethodHS256, []byte(k.Pub), map[string]any{"kid": k.Kid}, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() })), ModeRefresh, ErrBadSignature},
		{"refresh: wrong aud", k.Token(with(func(c jwt.MapClaims) { c["aud"] = "other-api"; c["exp"] = now.Add(-time.Hour).Unix() })), ModeRefresh, ErrClaims},
		{"refresh: wrong iss", k.Token(with(func(c jwt.MapClaims) { c["iss"] = "x"; c["exp"] = now.Add(-time.Hour).Unix() })), ModeRefresh, ErrClaims},
		{"refresh: nbf in the future", k.Token(with(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() })), ModeRefresh, ErrNotYetValid},
		{"refresh: missing exp", k.Token(without("exp")), ModeRefresh, ErrClaims},
		{"refresh: missing sub", k.Token(without("sub")), ModeRefresh, ErrClaims},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := f.verifier.Verify(context.Background(), tt.token, tt.mode)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if c.Subject != "client-1" || c.Workspace != "ws-1" || c.ID != "token-1" || c.KeyID != "k1" || c.Issuer != DefaultIssuer {
					t.Fatalf("claims = %+v", c)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if c != nil {
				t.Fatal("claims returned with an error")
			}
			var e *Error
			if !errors.As(err, &e) || e != tt.want {
				t.Fatalf("errors.As gives %v, want %v", e, tt.want)
			}
			if tt.token != "" && (strings.Contains(err.Error(), tt.token) || strings.Contains(err.Error(), strings.Split(tt.token, ".")[0])) {
				t.Fatalf("error text %q quotes the token", err)
			}
		})
	}
}

func TestVerifyClaims(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	now := f.clock.Now()
	c := claimsAt(now)
	c["aud"] = []string{"x", DefaultAudience}
	got, err := f.verifier.Verify(context.Background(), f.key.Token(c), ModeAccess)
	if err != nil {
		t.Fatal(err)
	}
	want := &Claims{
		Subject: "client-1", Workspace: "ws-1", ID: "token-1", Issuer: DefaultIssuer,
		Audience: []string{"x", DefaultAudience}, IssuedAt: now, NotBefore: now,
		ExpiresAt: now.Add(30 * time.Minute), KeyID: "k1",
	}
	if !got.IssuedAt.Equal(want.IssuedAt) || !got.NotBefore.Equal(want.NotBefore) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("times = %v %v %v", got.IssuedAt, got.NotBefore, got.ExpiresAt)
	}
	got.IssuedAt, got.NotBefore, got.ExpiresAt = want.IssuedAt, want.NotBefore, want.ExpiresAt
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("claims = %+v, want %+v", got, want)
	}
}

func TestVerifierOptions(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	now := f.clock.Now()
	c := claimsAt(now)
	c["iss"], c["aud"] = "https://auth.example", "records"
	token := f.key.Token(c)
	for _, tt := range []struct {
		name string
		opts VerifierOptions
		want error
	}{
		{"defaults refuse another issuer", VerifierOptions{}, ErrClaims},
		{"configured issuer and audience", VerifierOptions{Issuer: "https://auth.example", Audience: "records"}, nil},
		{"configured audience only", VerifierOptions{Audience: "records"}, ErrClaims},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Now = f.clock.Now
			v, err := NewVerifier(f.source, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Verify(context.Background(), token, ModeAccess); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}

	for _, tt := range []struct {
		name string
		opts VerifierOptions
	}{
		{"leeway above the maximum", VerifierOptions{Leeway: MaxLeeway + time.Second}},
		{"negative leeway", VerifierOptions{Leeway: -time.Second}},
		{"negative refresh grace", VerifierOptions{RefreshGrace: -time.Second}},
		{"negative cache max age", VerifierOptions{CacheMaxAge: -time.Second}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewVerifier(f.source, tt.opts); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if _, err := NewVerifier(nil, VerifierOptions{}); err == nil {
		t.Fatal("accepted a nil key source")
	}
}

func TestVerifyLeeway(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	c := claimsAt(f.clock.Now())
	c["exp"] = f.clock.Now().Add(-50 * time.Second).Unix()
	token := f.key.Token(c)
	for _, tt := range []struct {
		leeway time.Duration
		want   error
	}{
		{0, ErrExpired}, // the default, 30 s
		{MaxLeeway, nil},
		{10 * time.Second, ErrExpired},
	} {
		v, err := NewVerifier(f.source, VerifierOptions{Leeway: tt.leeway, Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(context.Background(), token, ModeAccess); !errors.Is(err, tt.want) {
			t.Errorf("leeway %s: err = %v, want %v", tt.leeway, err, tt.want)
		}
	}
}

func TestRefreshGrace(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	c := claimsAt(f.clock.Now())
	c["exp"] = f.clock.Now().Add(-2 * time.Hour).Unix()
	token := f.key.Token(c)
	for _, tt := range []struct {
		grace time.Duration
		want  error
	}{
		{0, nil}, // the default, 30 days
		{3 * time.Hour, nil},
		{time.Hour, ErrExpired},
	} {
		v, err := NewVerifier(f.source, VerifierOptions{RefreshGrace: tt.grace, Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(context.Background(), token, ModeRefresh); !errors.Is(err, tt.want) {
			t.Errorf("grace %s: err = %v, want %v", tt.grace, err, tt.want)
		}
	}
}

// errSource is a KeySource that fails with a foreign error.
type errSource struct{}

func (errSource) Key(context.Context, string) (ed25519.PublicKey, error) {
	return nil, errors.New("database is down")
}

func TestVerifyForeignSourceError(t *testing.T) {
	v, err := NewVerifier(errSource{}, VerifierOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k := testkit.NewSigner("k1")
	_, err = v.Verify(context.Background(), k.Token(claimsAt(time.Now())), ModeAccess)
	if !errors.Is(err, ErrKeysUnavailable) {
		t.Fatalf("err = %v, want ErrKeysUnavailable", err)
	}
}

func TestModeString(t *testing.T) {
	if ModeAccess.String() != "access" || ModeRefresh.String() != "refresh" {
		t.Fatal(ModeAccess.String(), ModeRefresh.String())
	}
}
