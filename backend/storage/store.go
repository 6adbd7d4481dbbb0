// Package storage opens what the backend's settings name: the store a
// database URL names (SQLite or PostgreSQL), its secrets sealed under the
// keeper (Seal), the blob store a blob URL names (a directory or S3) and
// the AWS configuration they share, and the backend's database as an
// operator's flags locate it (Database), with the data directory's
// layout. hdc-backend (package backend) and hdc's direct mode both open
// their stores here, so that the command line links none of the server.
package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/postgres"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
)

// OpenStore opens the store a database URL names: postgres://… or
// postgresql://… for PostgreSQL (several replicas may share it); empty for
// SQLite at dataDir/hdc.db, "sqlite:<path>", "sqlite://<path>",
// "file:<path>" or a plain path for another SQLite file. The server and the
// hdc commands (Database) share it.
func OpenStore(ctx context.Context, databaseURL, dataDir string) (store.Store, error) {
	if Shared(databaseURL) {
		return postgres.Open(ctx, databaseURL)
	}
	path, err := sqlitePath(databaseURL, dataDir)
	if err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, path)
}

// DescribeStore returns what the database URL of an open store names, as
// the start-up log says it: PostgreSQL's user, hosts and database
// (postgres.Describe), never its password; SQLite's file.
func DescribeStore(databaseURL, dataDir string) string {
	if Shared(databaseURL) {
		return postgres.Describe(databaseURL)
	}
	path, _ := sqlitePath(databaseURL, dataDir) // the store opened: the URL names a file
	return "sqlite:" + path
}

// ErrNoDatabase is OpenExistingStore's answer for a SQLite database file
// that does not exist.
var ErrNoDatabase = errors.New("no database")

// OpenExistingStore is OpenStore for a caller that only looks: it never
// creates a SQLite database, returning ErrNoDatabase for a file that does
// not exist.
func OpenExistingStore(ctx context.Context, databaseURL, dataDir string) (store.Store, error) {
	if !Shared(databaseURL) {
		path, err := sqlitePath(databaseURL, dataDir)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%s: %w", path, ErrNoDatabase)
		}
	}
	return OpenStore(ctx, databaseURL, dataDir)
}

// Shared reports whether databaseURL names a PostgreSQL database, which
// several backend processes may share.
func Shared(databaseURL string) bool {
	scheme, _, _ := strings.Cut(databaseURL, "://")
	return strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql")
}

func sqlitePath(databaseURL, dataDir string) (string, error) {
	scheme, rest, hasScheme := strings.Cut(databaseURL, ":")
	switch {
	case databaseURL == "":
		return filepath.Join(dataDir, DatabaseFile), nil
	case !hasScheme || filepath.VolumeName(databaseURL) != "":
		return databaseURL, nil
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "file":
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return "", fmt.Errorf("database URL %s: no path", scheme)
		}
		return path, nil
	}
	return "", fmt.Errorf("database URL scheme %q is not supported (use a path, sqlite:<path> or postgres://…)", scheme)
}
