package keyadmin

import (
	"errors"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// TestPageAndGet: a page of keys and one key, without their secrets.
func TestPageAndGet(t *testing.T) {
	t.Parallel()
	s, _ := service(t)
	for _, kid := range []string{"k-a", "k-b", "k-c"} {
		if _, err := s.Add(t.Context(), AddRequest{By: alice, Client: client1, Kid: kid}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.Page(t.Context(), store.ClientKeyFilter{WorkspaceID: "w1", Status: clientkey.Active, After: "k-a", Limit: 1})
	if err != nil || len(page) != 1 || page[0].Kid != "k-b" || page[0].Secret != "" {
		t.Fatalf("the page after k-a: %+v, %v", page, err)
	}
	k, err := s.Get(t.Context(), "k-c")
	if err != nil || k.Kid != "k-c" || k.Secret != "" || k.WorkspaceID != "w1" {
		t.Fatalf("Get: %+v, %v", k, err)
	}
	if _, err := s.Get(t.Context(), "k-none"); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Get of no key: %v, want ErrNoKey", err)
	}
}

// TestInvalidKeys: a key that breaks a rule is ErrInvalidKey, saying the
// rule and not the secret.
func TestInvalidKeys(t *testing.T) {
	t.Parallel()
	s, _ := service(t)
	if _, err := s.Add(t.Context(), AddRequest{By: alice, Client: client1, Kid: "k-a"}); err != nil {
		t.Fatal(err)
	}
	stale := false
	tests := []struct {
		name string
		run  func() error
		says string
	}{
		{"a short secret", func() error {
			_, err := s.Add(t.Context(), AddRequest{By: alice, Client: client1, Secret: "short-secret"})
			return err
		}, "exactly 16 bytes"},
		{"a bad kid", func() error {
			_, err := s.Add(t.Context(), AddRequest{By: alice, Client: client1, Kid: "k 1"})
			return err
		}, "kid must be"},
		{"an unknown enc", func() error {
			_, err := s.Rotate(t.Context(), RotateRequest{By: alice, Client: client1, Enc: "A128GCM"})
			return err
		}, "enc must be"},
		{"a stale A256GCM key", func() error {
			_, err := s.Rotate(t.Context(), RotateRequest{By: alice, Client: client1, Enc: "A256GCM", RequireFresh: &stale})
			return err
		}, "iat and jti"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), tt.says) || strings.Contains(err.Error(), "short-secret") {
				t.Fatalf("got %v, want ErrInvalidKey saying %q", err, tt.says)
			}
		})
	}
}
