package backend

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
)

// ErrPostgresNotBuilt is returned for a postgres:// database URL: the
// PostgreSQL store will implement store.Store and pass the same conformance
// suite, but it does not exist yet.
var ErrPostgresNotBuilt = errors.New("the PostgreSQL store is not built yet; use SQLite (leave the database URL empty)")

// OpenStore opens the store a database URL names: empty for SQLite at
// dataDir/hdc.db, "sqlite:<path>", "sqlite://<path>", "file:<path>" or a
// plain path for another SQLite file. The server and the hdc CLI share it.
func OpenStore(ctx context.Context, databaseURL, dataDir string) (store.Store, error) {
	path, err := sqlitePath(databaseURL, dataDir)
	if err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, path)
}

func sqlitePath(databaseURL, dataDir string) (string, error) {
	scheme, rest, hasScheme := strings.Cut(databaseURL, ":")
	switch {
	case databaseURL == "":
		return filepath.Join(dataDir, "hdc.db"), nil
	case !hasScheme || filepath.VolumeName(databaseURL) != "":
		return databaseURL, nil
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		return "", ErrPostgresNotBuilt
	case "sqlite", "file":
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return "", fmt.Errorf("database URL %s: no path", scheme)
		}
		return path, nil
	}
	return "", fmt.Errorf("database URL scheme %q is not supported (use a path, sqlite:<path> or postgres://…)", scheme)
}
