// Package operator is the backend's surface for the operator's commands
// (hdc clients, sharing, keys, keeper and audit): it opens the backend's
// database from the settings that locate it, with its secrets sealed under
// the keeper as the backend opens it, and says what the commands default
// to as the backend does, so that they need none of the server's wiring.
package operator

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/keeper"
)

// LocalKeyFile is the local keeper's key in the data directory, which hdc
// up makes on its first run when no keeper is configured (HDC_KEEPER).
const LocalKeyFile = "keeper.key"

// CheckpointDir is the directory under the data directory where hdc up has
// the backend write the audit checkpoints, when no other place is
// configured.
const CheckpointDir = "audit-checkpoints"

// DefaultAuditRetention is the backend's audit retention when
// HDC_AUDIT_RETENTION is unset.
const DefaultAuditRetention = backend.DefaultAuditRetention

// ErrNoDatabase is OpenExisting's and Peek's answer for a SQLite database
// file that is not there.
var ErrNoDatabase = backend.ErrNoDatabase

// DefaultDataDir is the backend's data directory when HDC_DATA is unset.
func DefaultDataDir() string { return backend.DefaultConfig().DataDir }

// ParseRetention reads an audit retention as the backend reads
// HDC_AUDIT_RETENTION: whole seconds, or a duration such as 52560h.
func ParseRetention(s string) (time.Duration, error) { return backend.ParseDuration(s) }

// Database locates the backend's database and the keeper its secrets are
// sealed under, as the backend's settings of the same names do.
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
	st, err := backend.OpenStore(ctx, d.URL, d.DataDir)
	if err != nil {
		return nil, err
	}
	return backend.Seal(ctx, st, d.KeeperURL(), zap.NewNop())
}

// OpenExisting is Open for a database that must be there: a SQLite
// database that is not is ErrNoDatabase, and none is created.
func (d Database) OpenExisting(ctx context.Context) (*sealed.Store, error) {
	st, err := d.Peek(ctx)
	if err != nil {
		return nil, err
	}
	return backend.Seal(ctx, st, d.KeeperURL(), zap.NewNop())
}

// Peek opens the database, which must be there (ErrNoDatabase), without
// the keeper: what it reads of a secret is as sealed as it is stored.
func (d Database) Peek(ctx context.Context) (store.Store, error) {
	return backend.OpenExistingStore(ctx, d.URL, d.DataDir)
}

// Rewrap wraps the data key of st, the backend's database, under the
// keeper to instead of from (sealed.Rewrap): the data key stays, and with
// it every sealed secret and the audit chain's key. It returns st sealed
// under to, whose audit trail is to record the rewrap, the data key's id,
// and whether it changed anything: a data key to wraps already is left.
func Rewrap(ctx context.Context, st store.Store, from, to *keeper.Keeper) (*sealed.Store, string, bool, error) {
	id, changed, err := sealed.Rewrap(ctx, st, from, to)
	if err != nil {
		return nil, id, changed, err
	}
	trail, err := sealed.Open(ctx, st, to, zap.NewNop())
	return trail, id, changed, err
}

// Person is the local operator whom a command run against the database
// directly records as the author of its changes: user@host (the login
// name, else $USER, and the host's name), marked direct. A character a
// person's name may not hold (contract.ValidPersonName) becomes '_', and
// the name is cut to its length.
func Person() audit.Person {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return audit.Person{Name: personName(name + "@" + host), Role: contract.RoleOperator, Direct: true}
}

// personName returns s with every character a person's name may not hold
// replaced by '_', cut to contract.MaxPersonName.
func personName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !contract.ValidPersonName(string(c)) {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), contract.MaxPersonName)])
}
