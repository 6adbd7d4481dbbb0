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
	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/testkit"
)

var testConfig = Config{
	Issuer: "health-data-connect", Audience: "health-data-connect-api",
	AccessTTL: 30 * time.Minute, RotateEvery: 24 * time.Hour, PublishAhead: 10 * time.Minute,
	CheckEvery: time.Minute, Leeway: time.Minute, RefreshGrace: 12 * time.Hour,
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

// newIssuer returns an Issuer on st and its clock, which starts after the
// Issuer's first Refresh.
func newIssuer(t *testing.T, st store.Store) (*Issuer, *testkit.Clock) {
	t.Helper()
	i, err := NewIssuer(t.Context(), st, testConfig, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	c := testkit.NewClock(time.Now())
	i.now = c.Now
	return i, c
}

// replica returns another Issuer on st that reads the time from c.
func replica(t *testing.T, st store.Store, c *testkit.Clock) *Issuer {
	t.Helper()
	i, err := NewIssuer(t.Context(), st, testConfig, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	i.now = c.Now
	refresh(t, i)
	return i
}

func refresh(t *testing.T, i *Issuer) {
	t.Helper()
	if err := i.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// issue returns the kid of a new token.
func issue(t *testing.T, i *Issuer) string {
	t.Helper()
	acc, err := i.Issue("c", "w", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return kid(t, acc.Token)
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
	acc, err := i.Issue("client-1", "ws-1", "grant-1", "session-1")
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
		WS      string `json:"ws"`
		Grant   string `json:"grant"`
		Session string `json:"sid"`
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
	if claims.Subject != "client-1" || claims.WS != "ws-1" || claims.Grant != "grant-1" || claims.Session != "session-1" || uuid.Validate(claims.ID) != nil || claims.NotBefore == nil ||
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
	firstKid := issue(t, i) // a new store's first key signs at once

	// The successor is created PublishAhead before the key is RotateEvery
	// old, and published at once, but not yet used: an edge that fetched
	// the JWKS just before must not meet an unknown kid.
	c.Advance(testConfig.RotateEvery - testConfig.PublishAhead - time.Second)
	refresh(t, i)
	if set := jwks(t, i); len(set.Keys) != 1 {
		t.Fatalf("rotated early: %+v", set)
	}
	c.Advance(time.Second)
	refresh(t, i)
	set := jwks(t, i)
	if len(set.Keys) != 2 || set.Keys[1].KeyID != firstKid {
		t.Fatalf("JWKS after rotation = %+v, want the new key first and the old one", set)
	}
	secondKid := set.Keys[0].KeyID
	if got := issue(t, i); got != firstKid {
		t.Fatal("signing with a key published less than PublishAhead ago")
	}
	c.Advance(testConfig.PublishAhead - time.Second)
	refresh(t, i)
	if got := issue(t, i); got != firstKid {
		t.Fatal("signing with a key published less than PublishAhead ago")
	}
	c.Advance(time.Second)
	refresh(t, i)
	if got := issue(t, i); got != secondKid {
		t.Fatal("not signing with the new key PublishAhead after it was published")
	}
	// A new replica agrees.
	if got := issue(t, replica(t, st, c)); got != secondKid {
		t.Fatal("a new replica signs with another key")
	}

	// The old key stays published while tokens it signed may be presented,
	// on the refresh route too.
	c.Advance(testConfig.CheckEvery + testConfig.AccessTTL + testConfig.Leeway + testConfig.RefreshGrace - time.Second)
	refresh(t, i)
	if set := jwks(t, i); len(set.Key(firstKid)) != 1 {
		t.Fatal("old key withdrawn while its tokens may still be presented")
	}
	c.Advance(2 * time.Second)
	refresh(t, i)
	if set := jwks(t, i); len(set.Keys) != 1 || len(set.Key(firstKid)) != 0 {
		t.Fatalf("old key still published after every token expired: %+v", set)
	}
	keys, _ := st.ListSigningKeys(t.Context())
	if len(keys) != 1 {
		t.Fatalf("%d keys stored, want the old one deleted", len(keys))
	}
}

// TestRefreshGraceKeepsKey: a token signed with the old key by a replica
// that has not switched yet, the last moment it may, can still be presented
// expired on the refresh route for RefreshGrace: its key must be published
// until then.
func TestRefreshGraceKeepsKey(t *testing.T) {
	st := openStore(t)
	i, c := newIssuer(t, st)
	oldKid := issue(t, i)
	c.Advance(testConfig.RotateEvery - testConfig.PublishAhead)
	refresh(t, i)
	// i now plays a replica whose next check comes CheckEvery after the new
	// key became active.
	c.Advance(testConfig.PublishAhead + testConfig.CheckEvery - time.Second)
	acc, err := i.Issue("c", "w", "", "")
	if err != nil || kid(t, acc.Token) != oldKid {
		t.Fatalf("setup: token not signed with the old key (%v)", err)
	}
	other := replica(t, st, c) // the replicas that did switch delete keys
	c.Advance(acc.ExpiresIn + testConfig.Leeway + testConfig.RefreshGrace - time.Second)
	refresh(t, other)
	if set := jwks(t, other); len(set.Key(oldKid)) != 1 {
		t.Fatal("the key of a token still accepted on the refresh route was withdrawn")
	}
	c.Advance(2 * time.Second)
	refresh(t, other)
	if set := jwks(t, other); len(set.Key(oldKid)) != 0 {
		t.Fatal("the old key outlives every token it signed")
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
	c.Advance(testConfig.RotateEvery - testConfig.PublishAhead)
	if err := i.Refresh(t.Context()); err != nil {
		t.Fatalf("losing the rotation race is not an error: %v", err)
	}
	keys, _ := st.ListSigningKeys(t.Context())
	if len(keys) != 2 {
		t.Fatalf("%d keys after a raced rotation, want 2", len(keys))
	}
	c.Advance(testConfig.PublishAhead)
	refresh(t, i)
	if issue(t, i) != keys[1].ID {
		t.Fatal("the loser does not sign with the winner's key")
	}
	// A second replica on the same store agrees and adds nothing.
	j := replica(t, st, c)
	keys, _ = st.ListSigningKeys(t.Context())
	if len(keys) != 2 || issue(t, j) != keys[1].ID {
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
	for name, mutate := range map[string]func(*Config){
		"zero RotateEvery":           func(c *Config) { c.RotateEvery = 0 },
		"PublishAhead = RotateEvery": func(c *Config) { c.PublishAhead = c.RotateEvery },
		"PublishAhead > RotateEvery": func(c *Config) { c.PublishAhead = 2 * c.RotateEvery },
		"negative PublishAhead":      func(c *Config) { c.PublishAhead = -time.Second },
		"negative RefreshGrace":      func(c *Config) { c.RefreshGrace = -time.Second },
	} {
		bad := testConfig
		mutate(&bad)
		if _, err := NewIssuer(t.Context(), openStore(t), bad, zap.NewNop()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
