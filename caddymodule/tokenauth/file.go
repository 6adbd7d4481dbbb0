package tokenauth

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// DefaultCheckInterval is the default of FileOptions.CheckInterval.
const DefaultCheckInterval = 2 * time.Second

// FileOptions configure a FileKeySource. Zero fields take the defaults.
type FileOptions struct {
	// CheckInterval is the least time between two looks at the file's
	// identity, size and modification time during lookups of known kids.
	// A lookup of an unknown kid looks at once. Default
	// DefaultCheckInterval.
	CheckInterval time.Duration
	// Logger receives reloads and refused files. Nil means no logging.
	Logger *zap.Logger
	// Now returns the current time. Nil means time.Now; tests set a clock.
	Now func() time.Time
}

// FileKeySource serves the keys of a local JWK Set file, for operators who
// distribute the backend's public keys themselves. The file is read when the
// source is made and again when it changes (another file, size or
// modification time), which lookups notice: every CheckInterval, and on
// every unknown kid. A changed file that cannot be read or parsed leaves the
// last good set in service. It is safe for concurrent use and starts no
// goroutine of its own.
type FileKeySource struct {
	path     string
	interval time.Duration
	logger   *zap.Logger
	now      func() time.Time

	cur       atomic.Pointer[keySet]
	nextCheck atomic.Int64 // Unix nanoseconds

	mu       sync.Mutex // serializes checks; guards the fields below
	seen     os.FileInfo
	rejected string // the last refusal, so that each is logged once
}

// NewFileKeySource reads the JWK Set file at path; unlike later reloads,
// this first read must succeed.
func NewFileKeySource(path string, opts FileOptions) (*FileKeySource, error) {
	if opts.CheckInterval < 0 {
		return nil, errors.New("tokenauth: negative check interval")
	}
	s := &FileKeySource{
		path:     path,
		interval: cmp.Or(opts.CheckInterval, DefaultCheckInterval),
		logger:   opts.Logger,
		now:      opts.Now,
	}
	if s.logger == nil {
		s.logger = zap.NewNop()
	}
	if s.now == nil {
		s.now = time.Now
	}
	keys, fi, err := loadJWKS(path)
	if err != nil {
		return nil, err
	}
	s.cur.Store(&keys)
	s.seen = fi
	s.nextCheck.Store(s.now().Add(s.interval).UnixNano())
	return s, nil
}

// Key implements KeySource.
func (s *FileKeySource) Key(_ context.Context, kid string) (ed25519.PublicKey, error) {
	k, ok := (*s.cur.Load())[kid]
	if ok && s.now().UnixNano() < s.nextCheck.Load() {
		return k, nil
	}
	if k, ok := s.check()[kid]; ok {
		return k, nil
	}
	return nil, ErrUnknownKey
}

// check reloads the file if it changed and returns the set in service.
func (s *FileKeySource) check() keySet {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextCheck.Store(s.now().Add(s.interval).UnixNano())
	fi, err := os.Stat(s.path)
	if err != nil {
		s.reject(err)
	} else if !sameVersion(fi, s.seen) {
		keys, loaded, err := loadJWKS(s.path)
		if loaded != nil {
			s.seen = loaded // a bad file is read once, not on every check
		}
		if err != nil {
			s.reject(err)
		} else {
			s.cur.Store(&keys)
			s.rejected = ""
			s.logger.Info("JWK Set file reloaded", zap.String("path", s.path), zap.Int("keys", len(keys)))
		}
	}
	return *s.cur.Load()
}

// reject logs a refused file once per distinct error.
func (s *FileKeySource) reject(err error) {
	if msg := err.Error(); msg != s.rejected {
		s.rejected = msg
		s.logger.Error("JWK Set file refused; keeping the last good set", zap.String("path", s.path), zap.Error(err))
	}
}

// loadJWKS reads and parses the file at path. It returns the information of
// the file it read, when it could open one, even if the content is refused.
func loadJWKS(path string) (keySet, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	keys, err := readJWKS(f)
	return keys, fi, err
}

// sameVersion reports whether a and b describe the same file with the same
// size and modification time. An atomic rename gives another file.
func sameVersion(a, b os.FileInfo) bool {
	return b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
