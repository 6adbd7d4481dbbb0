package tokenauth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// epoch is the tests' "now": a whole second, as in tokens.
var epoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: epoch} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// signingKey is an Ed25519 key pair and its kid.
type signingKey struct {
	kid  string
	pub  ed25519.PublicKey
	priv ed25519.PrivateKey
}

func newSigningKey(t testing.TB, kid string) signingKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, pub: pub, priv: priv}
}

// jwk returns the key as a JWK Set member.
func (k signingKey) jwk() map[string]any {
	return map[string]any{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig",
		"kid": k.kid, "x": base64.RawURLEncoding.EncodeToString(k.pub)}
}

// jwksOf returns the JWK Set document of keys.
func jwksOf(t testing.TB, keys ...signingKey) []byte {
	t.Helper()
	set := []map[string]any{}
	for _, k := range keys {
		set = append(set, k.jwk())
	}
	b, err := json.Marshal(map[string]any{"keys": set})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// claimsAt returns the claims of a valid access token issued at now.
func claimsAt(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"iss": DefaultIssuer, "aud": DefaultAudience,
		"sub": "client-1", "ws": "ws-1", "jti": "token-1",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(30 * time.Minute).Unix(),
	}
}

// sign returns a token for claims signed with method and key, whose header
// is the library's plus header (a nil value deletes a member).
func sign(t testing.TB, method jwt.SigningMethod, key any, header map[string]any, claims jwt.MapClaims) string {
	t.Helper()
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
		t.Fatal(err)
	}
	return s
}

// token returns an EdDSA token by k.
func (k signingKey) token(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	return sign(t, jwt.SigningMethodEdDSA, k.priv, map[string]any{"kid": k.kid}, claims)
}

// jwksServer serves a JWK Set on 127.0.0.1 and counts requests.
type jwksServer struct {
	*httptest.Server
	hits atomic.Int64

	mu     sync.Mutex
	body   []byte
	status int
}

func newJWKSServer(t testing.TB, body []byte) *jwksServer {
	t.Helper()
	s := &jwksServer{body: body, status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		body, status := s.body, s.status
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

// set changes what the server answers.
func (s *jwksServer) set(status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

// fixture is a verifier whose keys come from a JWK Set server, on a clock.
type fixture struct {
	clock    *clock
	key      signingKey
	server   *jwksServer
	source   *RemoteKeySource
	verifier *Verifier
}

// newFixture serves one key, "k1"; opts.Now is set to the fixture's clock.
func newFixture(t testing.TB, opts VerifierOptions) *fixture {
	t.Helper()
	f := &fixture{clock: newClock(), key: newSigningKey(t, "k1")}
	f.server = newJWKSServer(t, jwksOf(t, f.key))
	var err error
	f.source, err = NewRemoteKeySource(f.server.URL+"/.well-known/jwks.json", RemoteOptions{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	opts.Now = f.clock.Now
	f.verifier, err = NewVerifier(f.source, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// writeFile replaces the file at path with data, atomically.
func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
