package store

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered schema change of an engine.
type Migration struct {
	Version int64  // from the file name: 0003_throttle.sql is version 3
	Name    string // the file name
	Script  string // the SQL to run
}

// ReadMigrations returns the SQL files of fsys matching pattern, ordered by
// version. Every engine keeps its own scripts, numbered alike, and applies
// them with its own SQL.
func ReadMigrations(fsys fs.FS, pattern string) ([]Migration, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	ms := make([]Migration, 0, len(names))
	for _, name := range names {
		digits, _, ok := strings.Cut(path.Base(name), "_")
		v, err := strconv.ParseInt(digits, 10, 64)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q does not start with a version number", name)
		}
		script, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, Script: string(script)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %q and %q have the same version", ms[i-1].Name, ms[i].Name)
		}
	}
	return ms, nil
}

// Migrator is an engine's side of Migrate: statements, with no decision of
// their own.
type Migrator interface {
	// CreateTable creates the table of applied migrations unless it exists.
	CreateTable(ctx context.Context) error
	// Apply runs m's script and records its version, in one transaction,
	// unless the version is recorded already.
	Apply(ctx context.Context, m Migration) error
	// Newest returns the highest version recorded, 0 when none is.
	Newest(ctx context.Context) (int64, error)
}

// Migrate applies, in order and each in its own transaction, the
// migrations of fsys matching pattern that the database has not seen. A
// database migrated by a newer program is refused rather than used with a
// schema this one does not know.
func Migrate(ctx context.Context, m Migrator, fsys fs.FS, pattern string) error {
	if err := m.CreateTable(ctx); err != nil {
		return fmt.Errorf("migrations table: %w", err)
	}
	ms, err := ReadMigrations(fsys, pattern)
	if err != nil {
		return err
	}
	var latest int64
	for _, mg := range ms {
		latest = mg.Version
		if err := m.Apply(ctx, mg); err != nil {
			return fmt.Errorf("migration %s: %w", mg.Name, err)
		}
	}
	newest, err := m.Newest(ctx)
	if err != nil {
		return err
	}
	if newest > latest {
		return fmt.Errorf("database schema version %d is newer than this program's %d", newest, latest)
	}
	return nil
}
