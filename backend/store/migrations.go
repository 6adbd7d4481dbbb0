package store

import (
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
