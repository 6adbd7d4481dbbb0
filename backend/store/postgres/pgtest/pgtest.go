// Package pgtest gives tests a schema of their own on a PostgreSQL server
// named by the environment, so that the PostgreSQL suites of several
// packages can run at once on one database.
//
// HDC_TEST_POSTGRES_URL is the URL of a database in which its role may
// create schemas (scripts/postgres.sh starts a throwaway server and prints
// one). Without it the tests that need PostgreSQL skip, unless
// HDC_REQUIRE_POSTGRES=1 (as in CI), which makes them fail instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables read by URL.
const (
	EnvURL     = "HDC_TEST_POSTGRES_URL"
	EnvRequire = "HDC_REQUIRE_POSTGRES"
)

// Server returns the URL in HDC_TEST_POSTGRES_URL. Without one it skips t, or fails
// it when a server is required.
func Server(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvURL)
	if admin == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 but %s is not set", EnvRequire, EnvURL)
		}
		t.Skipf("no PostgreSQL server: set %s (see scripts/postgres.sh)", EnvURL)
	}
	return admin
}

// URL creates an empty schema for t and returns the URL of the server's
// database with that schema as its search path; the schema is dropped, with
// everything in it, when t ends. Without a server it skips or fails t as
// Server does.
func URL(t testing.TB) string {
	t.Helper()
	server := Server(t)
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("%s is not a URL", EnvURL)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "hdc_test_" + hex.EncodeToString(b)
	exec(t, server, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { exec(t, server, `DROP SCHEMA `+schema+` CASCADE`) })
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// exec runs one statement on a connection of its own.
func exec(t testing.TB, server, statement string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("connecting to %s: %v", EnvURL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, statement); err != nil {
		t.Fatalf("%s: %v", statement, err)
	}
}
