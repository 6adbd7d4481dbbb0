// Package privatefile writes files that hold secrets: readable by their
// owner only, and replaced whole, so that a reader never sees half of one.
package privatefile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data, mode 0600: it is written to a temporary
// file beside it and renamed over it.
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
