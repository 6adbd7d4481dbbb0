package kidregistry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// maxFileSize bounds what Load reads; a registry of a hundred thousand keys
// fits comfortably.
const maxFileSize = 32 << 20

// Load reads and validates the registry file at path. It refuses a file that
// group or others may access: the file holds every client's shared key.
func Load(path string) (*Registry, error) {
	data, err := readPrivate(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// readPrivate reads path after checking, on the opened file itself, that it
// is a regular file with no permission bits for group or others.
func readPrivate(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("registry %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("registry %s has mode %04o: it must not be accessible by group or others (chmod 600)", path, perm)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("registry %s is larger than %d bytes", path, maxFileSize)
	}
	return data, nil
}

// Update changes the registry file at path under an exclusive lock, so that
// concurrent operators never lose each other's changes, and replaces it
// atomically, so that a reader sees the old file or the new one and never a
// part. A missing file starts empty. fn's changes are validated before
// anything is written.
func Update(path string, fn func(*File) error) error {
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return fmt.Errorf("locking registry: %w", err)
	}
	defer unlock()

	var f File
	data, err := readPrivate(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		r, err := Parse(data)
		if err != nil {
			return fmt.Errorf("registry %s is invalid, fix it by hand first: %w", path, err)
		}
		f.Keys = r.Keys()
	}
	if err := fn(&f); err != nil {
		return err
	}
	if err := f.Validate(); err != nil {
		return err
	}
	if f.Keys == nil {
		f.Keys = []Key{}
	}
	out, err := json.MarshalIndent(&f, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(out, '\n'))
}

// writeAtomic writes data to a private temporary file beside path, syncs it,
// renames it over path and syncs the directory.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err = tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
