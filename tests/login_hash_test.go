package tests

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/credential"
	"github.com/health-data-connect/hdc/backend/store"
)

// TestLegacySecretsMoveAtLogin (second review, finding 3): a client whose
// secret an earlier version stored as argon2id logs in through the real
// binaries with the secret it has, and its stored hash becomes the keyed
// hash then: nothing is re-issued. A client made now is stored keyed from
// the start.
func TestLegacySecretsMoveAtLogin(t *testing.T) {
	s := startStack(t)
	fresh := s.newClient("hash-fresh")
	if h := s.secretHash(fresh.ID); !strings.HasPrefix(h, "$hmac-sha256$") {
		t.Fatalf("a new client's secret is stored as %.16q", h)
	}
	legacy := s.newClient("hash-legacy")
	const secret = "hdc_cs_issued-by-an-earlier-version-of-the-gateway"
	s.withStore(func(st store.Store) error {
		return st.ReplaceSecretHash(context.Background(), legacy.ID, s.secretHash(legacy.ID), credential.Hash(secret, credential.DefaultParams))
	})
	legacy.Secret = secret
	if h := s.secretHash(legacy.ID); !strings.HasPrefix(h, "$argon2id$") {
		t.Fatalf("the legacy client's secret is stored as %.16q", h)
	}
	if got := s.loginFrom("127.0.0.1", "", legacy, "hdc_cs_not-the-secret"); got != http.StatusUnauthorized {
		t.Fatalf("a wrong secret: %d", got)
	}
	if h := s.secretHash(legacy.ID); !strings.HasPrefix(h, "$argon2id$") {
		t.Fatal("a wrong secret moved the hash")
	}
	for i := range 2 {
		s.login(legacy, true, "")
		if h := s.secretHash(legacy.ID); !strings.HasPrefix(h, "$hmac-sha256$") {
			t.Fatalf("after login %d the secret is stored as %.16q", i+1, h)
		}
	}
}

// secretHash returns the stored hash of the client's secret.
func (s *stack) secretHash(clientID string) string {
	s.t.Helper()
	var c store.Client
	s.withStore(func(st store.Store) (err error) {
		c, err = st.GetClient(context.Background(), clientID)
		return err
	})
	return c.SecretHash
}

// withStore runs fn on the stack's store, opened beside the running
// backend.
func (s *stack) withStore(fn func(store.Store) error) {
	s.t.Helper()
	st, err := backend.OpenExistingStore(context.Background(), "", filepath.Join(s.dir, "backend"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer st.Close()
	if err := fn(st); err != nil {
		s.t.Fatal(err)
	}
}
