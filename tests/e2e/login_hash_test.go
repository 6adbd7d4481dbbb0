package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/credential"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestLegacySecretsMoveAtLogin (second review, finding 3): a client whose
// secret an earlier version stored as argon2id logs in through the real
// binaries with the secret it has, and its stored hash becomes the keyed
// hash then: nothing is re-issued. A client made now is stored keyed from
// the start.
func TestLegacySecretsMoveAtLogin(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	fresh := s.NewClient("hash-fresh")
	if h := s.SecretHash(fresh.ID); !strings.HasPrefix(h, "$hmac-sha256$") {
		t.Fatalf("a new client's secret is stored as %.16q", h)
	}
	legacy := s.NewClient("hash-legacy")
	const secret = "hdc_cs_issued-by-an-earlier-version-of-the-gateway"
	s.WithStore(func(st store.Store) error {
		return st.ReplaceSecretHash(context.Background(), legacy.ID, s.SecretHash(legacy.ID), credential.Hash(secret, credential.DefaultParams))
	})
	legacy.Secret = secret
	if h := s.SecretHash(legacy.ID); !strings.HasPrefix(h, "$argon2id$") {
		t.Fatalf("the legacy client's secret is stored as %.16q", h)
	}
	if got := s.LoginFrom("127.0.0.1", "", legacy, "hdc_cs_not-the-secret"); got != http.StatusUnauthorized {
		t.Fatalf("a wrong secret: %d", got)
	}
	if h := s.SecretHash(legacy.ID); !strings.HasPrefix(h, "$argon2id$") {
		t.Fatal("a wrong secret moved the hash")
	}
	for i := range 2 {
		s.Login(legacy, true, "")
		if h := s.SecretHash(legacy.ID); !strings.HasPrefix(h, "$hmac-sha256$") {
			t.Fatalf("after login %d the secret is stored as %.16q", i+1, h)
		}
	}
}
