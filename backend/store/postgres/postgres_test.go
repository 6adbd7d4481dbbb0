package postgres

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
	"github.com/health-data-connect/hdc/backend/store/storetest"
)

func open(t testing.TB, url string) *Store {
	t.Helper()
	s, err := Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	pgtest.Server(t)
	storetest.Run(t, func(t *testing.T) storetest.Store { return open(t, pgtest.URL(t)) })
}

// BenchmarkAppendAudit is an audit record's cost on PostgreSQL, one
// transaction each.
func BenchmarkAppendAudit(b *testing.B) {
	storetest.BenchAppendAudit(b, open(b, pgtest.URL(b)))
}

// TestReplicas runs the coordination tests on two pools on one database,
// as two replicas have.
func TestReplicas(t *testing.T) {
	pgtest.Server(t)
	storetest.RunReplicas(t, func(t *testing.T) (storetest.Store, storetest.Store) {
		url := pgtest.URL(t)
		return open(t, url), open(t, url)
	})
}

// TestConcurrentMigrations starts several stores on one empty database at
// once, as replicas starting together do: the advisory lock lets one
// migrate while the others wait, and all of them end up with the schema.
func TestConcurrentMigrations(t *testing.T) {
	url := pgtest.URL(t)
	const replicas = 4
	stores := make([]*Store, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() { stores[i], errs[i] = Open(t.Context(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	var n int
	if err := stores[0].pool.QueryRow(t.Context(), `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if files, _ := migrations.ReadDir("migrations"); n != len(files) {
		t.Fatalf("%d migrations recorded, want %d", n, len(files))
	}
	if _, err := stores[replicas-1].EnsureWorkspace(t.Context(), "w1", time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeDropsKeptAnswers: version 23 drops the answers an earlier
// version kept.
func TestUpgradeDropsKeptAnswers(t *testing.T) {
	url := pgtest.URL(t)
	s := open(t, url)
	storetest.AnswersDropped(t, s, func() storetest.Store {
		if _, err := s.pool.Exec(t.Context(), `DELETE FROM schema_migrations WHERE version = 23`); err != nil {
			t.Fatal(err)
		}
		return open(t, url)
	})
}

func TestRefusesNewerSchema(t *testing.T) {
	url := pgtest.URL(t)
	s := open(t, url)
	if _, err := s.pool.Exec(t.Context(), `INSERT INTO schema_migrations (version, applied_at) VALUES (999, now())`); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(t.Context(), url); err == nil {
		s.Close()
		t.Fatal("Open accepted a database migrated by a newer program")
	}
}

func TestOpenHidesTheURL(t *testing.T) {
	_, err := Open(t.Context(), "postgres://u:s3cret-password@127.0.0.1:1/db?sslmode=bogus")
	if err == nil {
		t.Fatal("Open accepted a malformed URL")
	}
	if msg := err.Error(); len(msg) == 0 || strings.Contains(msg, "s3cret-password") {
		t.Fatalf("error %q reveals the password", msg)
	}
}

// TestDescribe: what a database URL names, for the start-up log: the user,
// every host and port pgx may try, and the database, never the password,
// wherever the URL holds it.
func TestDescribe(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, url, want string }{
		{"the password in the user info", "postgres://hdc:s3cret@db.internal:5432/hdc?sslmode=verify-full",
			"postgres://hdc@db.internal:5432/hdc"},
		{"the password in the query, the default port", "postgresql://hdc@db.internal/hdc?password=s3cret&sslmode=require",
			"postgres://hdc@db.internal:5432/hdc"},
		{"TLS preferred: one host, tried twice", "postgres://hdc:s3cret@db.internal:6432/hdc?sslmode=prefer",
			"postgres://hdc@db.internal:6432/hdc"},
		{"several hosts", "postgres://hdc:s3cret@db1:5432,db2:5433/hdc?target_session_attrs=read-write",
			"postgres://hdc@db1:5432,db2:5433/hdc"},
		{"a unix socket", "postgres:///hdc?host=/run/postgresql&user=hdc&password=s3cret",
			"postgres://hdc@/run/postgresql:5432/hdc"},
		{"a URL that does not parse", "postgres://hdc:s3cret@db.internal:5432/hdc?sslmode=bogus",
			"postgres (a database URL that does not parse)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Describe(tt.url); got != tt.want {
				t.Errorf("Describe(%q) = %q, want %q", tt.url, got, tt.want)
			}
		})
	}
}
