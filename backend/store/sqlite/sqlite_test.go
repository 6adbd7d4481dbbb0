package sqlite

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store/storetest"
)

func open(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return open(t) })
}

// BenchmarkAppendAudit is an audit record's cost on SQLite, one
// transaction each.
func BenchmarkAppendAudit(b *testing.B) {
	storetest.BenchAppendAudit(b, open(b))
}

// TestReplicas runs the coordination tests on two handles of one file, as
// the server and the hdc command have.
func TestReplicas(t *testing.T) {
	storetest.RunReplicas(t, func(t *testing.T) (storetest.Store, storetest.Store) {
		path := filepath.Join(t.TempDir(), "hdc.db")
		a, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		b, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return a, b
	})
}

func TestReopenKeepsDataAndSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "hdc.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureWorkspace(t.Context(), "w1", time.Unix(1700000000, 0)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Fatalf("database file mode = %v, want 0600", perm)
	}
	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if _, err := s.GetWorkspace(t.Context(), "w1"); err != nil {
		t.Fatalf("workspace lost across reopen: %v", err)
	}
}

// TestUpgradeDropsKeptAnswers: version 23 drops the answers an earlier
// version kept.
func TestUpgradeDropsKeptAnswers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hdc.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	storetest.AnswersDropped(t, s, func() storetest.Store {
		if _, err := s.db.Exec(`DELETE FROM schema_migrations WHERE version = 23`); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if s, err = Open(t.Context(), path); err != nil {
			t.Fatal(err)
		}
		return s
	})
	s.Close()
}

func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hdc.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err := Open(t.Context(), path); err == nil {
		s.Close()
		t.Fatal("Open accepted a database migrated by a newer program")
	}
}
