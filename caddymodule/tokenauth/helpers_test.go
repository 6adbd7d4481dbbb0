package tokenauth

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// epoch is the tests' "now": a whole second, as in tokens.
var epoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// claimsAt returns the claims of a valid access token issued at now.
func claimsAt(now time.Time) jwt.MapClaims {
	return testkit.Claims("client-1", "ws-1", "token-1", now)
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
	clock    *testkit.Clock
	key      *testkit.Signer
	server   *jwksServer
	source   *RemoteKeySource
	verifier *Verifier
}

// newFixture serves one key, "k1"; opts.Now is set to the fixture's clock.
func newFixture(t testing.TB, opts VerifierOptions) *fixture {
	t.Helper()
	f := &fixture{clock: testkit.NewClock(epoch), key: testkit.NewSigner("k1")}
	f.server = newJWKSServer(t, testkit.JWKS(f.key))
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
