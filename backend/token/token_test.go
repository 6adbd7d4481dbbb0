package token

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	gojwt "github.com/golang-jwt/jwt/v5"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
)

var testConfig = Config{
	Issuer: "health-data-connect", Audience: "health-data-connect-api",
	AccessTTL: 30 * time.Minute, RotateEvery: 24 * time.Hour, CheckEvery: time.Minute, Leeway: time.Minute,
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newIssuer(t *testing.T, st store.Store) (*Issuer, *clock) {
	t.Helper()
	i, err := NewIssuer(t.Context(), st, testConfig, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Now()}
	i.now = c.now
	return i, c
}

func jwks(t *testing.T, i *Issuer) jose.JSONWebKeySet {
	t.Helper()
	b, err := i.JWKS(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	return set
}

func TestIssueVerifiesAgainstJWKS(t *testing.T) {
	i, _ := newIssuer(t, openStore(t))
	acc, err := i.Issue("client-1", "ws-1")
	if err != nil {
		t.Fatal(err)
	}
	set := jwks(t, i)
	if len(set.Keys) != 1 || set.Keys[0].Algorithm != "EdDSA" || set.Keys[0].Use != "sig" || !set.Keys[0].IsPublic() {
		t.Fatalf("JWKS = %+v", set)
	}

	// Verify with an independent JWT library, algorithm pinned.
	var claims struct {
		gojwt.RegisteredClaims
		WS string `json:"ws"`
	}
	tok, err := gojwt.ParseWithClaims(acc.Token, &claims, func(tok *gojwt.Token) (any, error) {
		keys := set.Key(tok.Header["kid"].(string))
		if len(keys) != 1 {
			t.Fatalf("kid %v not in the JWKS", tok.Header["kid"])
		}
		return keys[0].Key.(ed25519.PublicKey), nil
	}, gojwt.WithValidMethods([]string{"EdDSA"}), gojwt.WithIssuer("health-data-connect"),
		gojwt.WithAudience("health-data-connect-api"), gojwt.WithIssuedAt(), gojwt.WithExpirationRequired())
	if err != nil || !tok.Valid {
		t.Fatalf("token does not verify: %v", err)
	}
	if claims.Subject != "client-1" || claims.WS != "ws-1" || claims.ID != acc.ID || claims.NotBefore == nil ||
		claims.ExpiresAt.Sub(claims.IssuedAt.Time) != 30*time.Minute || tok.Header["typ"] != "JWT" {
		t.Fatalf("claims = %+v, header = %v", claims, tok.Header)
	}
	if acc.ExpiresIn != 30*time.Minute {
		t.Fatalf("ExpiresIn = %v", acc.ExpiresIn)
	}
}

func TestRotation(t *testing.T) {
	st := openStore(t)
	i, c := newIssuer(t, st)
	first, _ := i.Issue("c", "w")
	firstKid := kid(t, first.Token)

	c.advance(testConfig.RotateEvery)
	if err := i.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	second, _ := i.Issue("c", "w")
	if kid(t, second.Token) == firstKid {
		t.Fatal("no rotation after RotateEvery")
	}
	// The old key stays published while tokens it signed may be valid.
	if set := jwks(t, i); len(set.Keys) != 2 || set.Keys[0].KeyID != kid(t, second.Token) || len(set.Key(firstKid)) != 1 {
		t.Fatalf("JWKS after rotation = %+v", set)
	}
	c.advance(testConfig.CheckEvery + testConfig.AccessTTL + testConfig.Leeway - time.Second)
	if err := i.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if set := jwks(t, i); len(set.Key(firstKid)) != 1 {
		t.Fatal("old key withdrawn while its tokens may still be valid")
	}
	c.advance(2 * time.Second)
	if err := i.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if set := jwks(t, i); len(set.Keys) != 1 || len(set.Key(firstKid)) != 0 {
		t.Fatalf("old key still published after every token expired: %+v", set)
	}
	keys, _ := st.ListSigningKeys(t.Context())
	if len(keys) != 1 {
		t.Fatalf("%d keys stored, want the old one deleted", len(keys))
	}
}

// racingStore adds a rival key of the same generation just before the
// Issuer's own insert, as another replica rotating at the same moment would.
type racingStore struct {
	store.Store
	once sync.Once
}

func (r *racingStore) AddSigningKey(ctx context.Context, k store.SigningKey) error {
	r.once.Do(func() {
		rival, err := newSigningKey(k.Generation, k.CreatedAt)
		if err == nil {
			err = r.Store.AddSigningKey(ctx, rival)
		}
		if err != nil {
			panic(err)
		}
	})
	return r.Store.AddSigningKey(ctx, k)
}

func TestConcurrentRotationAddsOneKey(t *testing.T) {
	st := openStore(t)
	i, c := newIssuer(t, st)
	i.store = &racingStore{Store: st}
	c.advance(testConfig.RotateEvery)
	if err := i.Refresh(t.Context()); err != nil {
		t.Fatalf("losing the rotation race is not an error: %v", err)
	}
	keys, _ := st.ListSigningKeys(t.Context())
	if len(keys) != 2 {
		t.Fatalf("%d keys after a raced rotation, want 2", len(keys))
	}
	acc, _ := i.Issue("c", "w")
	if kid(t, acc.Token) != keys[1].ID {
		t.Fatal("the loser does not sign with the winner's key")
	}
	// A second replica on the same store agrees and adds nothing.
	j, _ := newIssuer(t, st)
	keys, _ = st.ListSigningKeys(t.Context())
	if acc, _ := j.Issue("c", "w"); len(keys) != 2 || kid(t, acc.Token) != keys[1].ID {
		t.Fatal("second replica disagrees on the signing key")
	}
}

func kid(t *testing.T, tok string) string {
	t.Helper()
	parsed, err := josejwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	return parsed.Headers[0].KeyID
}

func TestNewIssuerRejectsBadConfig(t *testing.T) {
	bad := testConfig
	bad.RotateEvery = 0
	if _, err := NewIssuer(t.Context(), openStore(t), bad, zap.NewNop()); err == nil {
		t.Fatal("zero RotateEvery accepted")
	}
}
