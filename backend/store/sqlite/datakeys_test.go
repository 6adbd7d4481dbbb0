package sqlite

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// TestReplacedSecretsLeaveNoTrace: a secret stored in the clear and then
// replaced (as package sealed seals the secrets of an earlier version) is
// in none of the database's files once the store is compacted: not in a
// free page, not in the write-ahead log.
func TestReplacedSecretsLeaveNoTrace(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(t.Context(), filepath.Join(dir, "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var on int
	if err := s.db.QueryRowContext(t.Context(), `PRAGMA secure_delete`).Scan(&on); err != nil || on != 1 {
		t.Fatalf("secure_delete = %d, %v; want 1", on, err)
	}
	const plain = "whsec_PLAIN-webhook-key-that-must-not-survive"
	now := time.Now()
	if _, err := s.EnsureWorkspace(t.Context(), "w1", now); err != nil {
		t.Fatal(err)
	}
	for i := range 50 { // enough rows that pages are split and freed
		sub := store.Subscription{ID: "s" + string(rune('A'+i)), WorkspaceID: "w1", Endpoint: "https://h.example/" + string(rune('A'+i)),
			Protocol: "https", SigningKey: plain, Status: store.SubscriptionActive, CreatedAt: now}
		e := audit.Event{At: now, Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: "w1",
			Entity: audit.Entity{Kind: audit.EntitySubscription, ID: "12345678-1234-4234-8234-123456789abc"}}
		if err := s.CreateSubscription(t.Context(), sub, 0, e); err != nil {
			t.Fatal(err)
		}
	}
	secrets, err := s.Secrets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range secrets {
		if err := s.ReplaceSecret(t.Context(), sec, "hdc1.sealed"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(plain)) {
			t.Errorf("%s still holds the replaced secret", e.Name())
		}
	}
}
