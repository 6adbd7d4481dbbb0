package registryfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/privatefile"
)

// maxFileSize bounds what Load reads; a registry of a hundred thousand keys
// fits comfortably.
const maxFileSize = 32 << 20

// Load reads and validates the registry file at path, opening its sealed
// secrets with s (Parse). It refuses a file that group or others may
// access: the file holds every client's shared key.
func Load(path string, s *Sealer) (*Registry, error) {
	data, err := readPrivate(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, s)
}

// readPrivate reads the registry file at path, which must be private.
func readPrivate(path string) ([]byte, error) {
	data, err := privatefile.Read(path, maxFileSize)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	return data, nil
}

// Update changes the registry file at path under an exclusive lock, so that
// concurrent operators never lose each other's changes, and replaces it
// atomically, so that a reader sees the old file or the new one and never a
// part. A missing file starts empty. fn's changes are validated before
// anything is written. Every secret is written sealed under the file's data
// key (a new one, wrapped by s's keeper, for a file that has none yet): a
// file of plain secrets is sealed by its first update.
func Update(path string, s *Sealer, fn func(*File) error) error {
	if s == nil {
		return ErrNoKeeper
	}
	return locked(path, func(stored *fileForm) error {
		r, err := stored.registry(s)
		if err != nil {
			return fmt.Errorf("registry %s is invalid, fix it by hand first: %w", path, err)
		}
		f := File{Keys: r.Keys()}
		if err := fn(&f); err != nil {
			return err
		}
		if err := f.Validate(); err != nil {
			return err
		}
		ref, key, err := s.current(stored.DataKey)
		if err != nil {
			return err
		}
		return write(path, encode(f.Keys, ref, key))
	})
}

// locked runs fn with the registry file at path as stored (no keys when it
// is missing), under the file's lock.
func locked(path string, fn func(*fileForm) error) error {
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return fmt.Errorf("locking registry: %w", err)
	}
	defer unlock()
	f := &fileForm{Keys: []storedKey{}}
	data, err := readPrivate(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if f, err = parseForm(data); err != nil {
			return fmt.Errorf("registry %s is invalid, fix it by hand first: %w", path, err)
		}
	}
	return fn(f)
}

// write replaces the file at path with f.
func write(path string, f fileForm) error {
	if f.Keys == nil {
		f.Keys = []storedKey{}
	}
	out, err := json.MarshalIndent(&f, "", "  ")
	if err != nil {
		return err
	}
	return privatefile.Write(path, append(out, '\n'))
}

// List returns the keys of the registry file at path without their
// secrets, which it does not open: listing needs no keeper.
func List(path string) ([]clientkey.Listed, error) {
	data, err := readPrivate(path)
	if err != nil {
		return nil, err
	}
	f, err := parseForm(data)
	if err != nil {
		return nil, err
	}
	keys := make([]clientkey.Listed, len(f.Keys))
	for i, k := range f.Keys {
		keys[i] = k.Listed
	}
	return keys, nil
}
