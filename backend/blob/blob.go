// Package blob stores uploaded files by content: the key of a file is the
// hex SHA-256 of its bytes, so storing a file twice keeps one copy. Dir is
// the local-directory store of one machine; S3 keeps blobs in an
// S3-compatible bucket that several backend replicas share. Package
// blobtest is the conformance suite both pass.
package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotFound is returned by Open for a key that is not stored.
var ErrNotFound = errors.New("blob: not found")

// Store is a content-addressed blob store.
type Store interface {
	// Put reads r to its end and stores the bytes under their hex SHA-256,
	// which it returns with their count. Nothing is stored when reading r
	// fails; that error is returned as is. Putting stored content again is
	// no error.
	Put(ctx context.Context, r io.Reader) (key string, size int64, err error)
	// Open returns the bytes stored under key, or ErrNotFound.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// SweepStaged removes the staged files of uploads that a process which
	// died while writing them left behind, and returns how many; a process
	// calls it as it starts. Files of writers alive in other processes are
	// kept.
	SweepStaged() (int, error)
}

// Dir stores blobs as files under a root directory: <root>/<k[:2]>/<k>,
// written to <root>/tmp first, synced, then renamed into place, so a blob
// is either complete or absent after a crash.
type Dir struct {
	root string
}

// stagedPattern names the files of uploads being written to <root>/tmp.
const stagedPattern = "put-*"

// NewDir returns a Dir rooted at root, creating it (owner-only) if needed.
func NewDir(root string) (*Dir, error) {
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o700); err != nil {
		return nil, err
	}
	return &Dir{root: root}, nil
}

// SweepStaged implements Store: it removes what a process that died while
// writing a blob left in <root>/tmp.
func (d *Dir) SweepStaged() (int, error) {
	return sweepStaged(filepath.Join(d.root, "tmp"), stagedPattern)
}

// Put implements Store.
func (d *Dir) Put(ctx context.Context, r io.Reader) (key string, size int64, err error) {
	tmp, err := stage(filepath.Join(d.root, "tmp"), stagedPattern)
	if err != nil {
		return "", 0, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	size, err = io.Copy(io.MultiWriter(tmp, h), r)
	if err != nil {
		return "", 0, err
	}
	if err = ctx.Err(); err != nil {
		return "", 0, err
	}
	if err = tmp.Sync(); err != nil {
		return "", 0, err
	}
	if err = tmp.Close(); err != nil {
		return "", 0, err
	}
	key = hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(d.root, key[:2])
	if err = os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, err
	}
	final := filepath.Join(dir, key)
	if _, statErr := os.Stat(final); statErr == nil {
		os.Remove(tmp.Name())
		return key, size, nil
	}
	if err = os.Rename(tmp.Name(), final); err != nil {
		return "", 0, err
	}
	if err = syncDir(dir); err != nil {
		return "", 0, err
	}
	return key, size, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Open implements Store.
func (d *Dir) Open(_ context.Context, key string) (io.ReadCloser, error) {
	if !validKey(key) {
		return nil, ErrNotFound
	}
	f, err := os.Open(filepath.Join(d.root, key[:2], key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return f, err
}

// validKey reports whether key is a lowercase hex SHA-256, so that it can
// never name a path outside the root.
func validKey(key string) bool {
	if len(key) != 2*sha256.Size {
		return false
	}
	for _, c := range key {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

var _ Store = (*Dir)(nil)
