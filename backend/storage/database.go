package storage

import (
	"context"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/keeper"
)

// The data directory's layout: what the backend keeps there when no URL
// names another place, and what hdc up leaves there for the commands to
// find.
const (
	// DefaultDataDir is the backend's data directory when HDC_DATA is
	// unset.
	DefaultDataDir = "./data"
	// DatabaseFile is the SQLite database in the data directory, when no
	// database URL names another (OpenStore).
	DatabaseFile = "hdc.db"
	// LocalKeyFile is the local keeper's key, which hdc up makes on its
	// first run when no keeper is configured (HDC_KEEPER).
	LocalKeyFile = "keeper.key"
	// CheckpointDir is where hdc up has the backend write the audit
	// checkpoints, when no other place is configured.
	CheckpointDir = "audit-checkpoints"
)

// Database locates the backend's database and the keeper its secrets are
// sealed under, as the backend's settings of the same names do: hdc's
// commands open it so in direct mode.
type Database struct {
	// URL is the database's (HDC_DATABASE_URL): postgres://… for
	// PostgreSQL; empty for SQLite at <DataDir>/hdc.db.
	URL string
	// DataDir is the backend's data directory (HDC_DATA).
	DataDir string
	// Keeper is the URL of the keeper that wraps the data key (HDC_KEEPER);
	// empty, the local keeper hdc up made in DataDir, when it is there.
	Keeper string
}

// KeeperURL is Keeper, else the local keeper hdc up made in the data
// directory when its key file is there, else "".
func (d Database) KeeperURL() string {
	if d.Keeper != "" {
		return d.Keeper
	}
	local, err := filepath.Abs(filepath.Join(d.DataDir, LocalKeyFile))
	if _, serr := os.Stat(local); err != nil || serr != nil {
		return ""
	}
	return keeper.KeyFileURL(local)
}

// LocalCheckpoints is the bucket URL of the audit checkpoints hdc up has
// the backend write under the data directory of a SQLite database, when
// that directory is there; "" otherwise.
func (d Database) LocalCheckpoints() string {
	if d.URL != "" {
		return ""
	}
	dir, err := filepath.Abs(filepath.Join(d.DataDir, CheckpointDir))
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return "file://" + filepath.ToSlash(dir)
}

// Open opens the database, creating a SQLite database that is not there,
// its secrets sealed under the keeper.
func (d Database) Open(ctx context.Context) (*sealed.Store, error) {
	st, err := OpenStore(ctx, d.URL, d.DataDir)
	if err != nil {
		return nil, err
	}
	return Seal(ctx, st, d.KeeperURL(), zap.NewNop())
}

// OpenExisting is Open for a database that must be there: a SQLite
// database that is not is ErrNoDatabase, and none is created.
func (d Database) OpenExisting(ctx context.Context) (*sealed.Store, error) {
	st, err := d.Peek(ctx)
	if err != nil {
		return nil, err
	}
	return Seal(ctx, st, d.KeeperURL(), zap.NewNop())
}

// Peek opens the database, which must be there (ErrNoDatabase), without
// the keeper: what it reads of a secret is as sealed as it is stored.
func (d Database) Peek(ctx context.Context) (store.Store, error) {
	return OpenExistingStore(ctx, d.URL, d.DataDir)
}
