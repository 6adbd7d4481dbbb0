package registryfile

import (
	"context"
	"crypto/sha256"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Watcher serves the current registry of a file and reloads it when the file
// changes. A file that fails to load leaves the last good registry in place.
type Watcher struct {
	path    string
	sealer  *Sealer
	logger  *zap.Logger
	observe Observer
	cur     atomic.Pointer[Registry]

	mu       sync.Mutex // serializes reloads
	loaded   [sha256.Size]byte
	rejected string // the last refusal, so that each is logged once
}

// Observer is told the outcome of every reload: the registry in use after it,
// whether it changed, and why the file was refused if it was.
type Observer func(current *Registry, changed bool, err error)

// NewWatcher loads the registry at path, opening its secrets with s (nil
// when there is no keeper); unlike later reloads, this first load must
// succeed. observe, if not nil, is called after every reload.
func NewWatcher(path string, s *Sealer, logger *zap.Logger, observe Observer) (*Watcher, error) {
	data, err := readPrivate(path)
	if err != nil {
		return nil, err
	}
	r, err := Parse(data, s)
	if err != nil {
		return nil, err
	}
	if observe == nil {
		observe = func(*Registry, bool, error) {}
	}
	w := &Watcher{path: path, sealer: s, logger: logger, observe: observe, loaded: sha256.Sum256(data)}
	w.use(r)
	return w, nil
}

// use makes r the current registry, and says what of it is not as it
// should be: plain secrets (a file of an earlier version), secrets that
// did not open.
func (w *Watcher) use(r *Registry) {
	w.cur.Store(r)
	if n := r.Plain(); n > 0 {
		w.logger.Warn("the key registry holds plain secrets; hdc keys wrap, or its next change, seals them",
			zap.String("path", w.path), zap.Int("plain", n))
	}
	if kids := r.Unavailable(); len(kids) > 0 {
		w.logger.Error("the sealed secrets of these kids do not open under the registry's data key; their requests are refused",
			zap.String("path", w.path), zap.Strings("kids", kids))
	}
}

// Registry returns the current registry.
func (w *Watcher) Registry() *Registry { return w.cur.Load() }

// Reload reads the file now. It swaps in the new registry when the content
// changed and is valid, and reports whether it did. On error the current
// registry stays.
func (w *Watcher) Reload() (changed bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	changed, err = w.reload()
	w.observe(w.cur.Load(), changed, err)
	return changed, err
}

func (w *Watcher) reload() (changed bool, err error) {
	data, err := readPrivate(w.path)
	if err != nil {
		return false, w.reject(err.Error(), err)
	}
	sum := sha256.Sum256(data)
	if sum == w.loaded {
		return false, nil
	}
	r, err := Parse(data, w.sealer)
	if err != nil {
		return false, w.reject(string(sum[:]), err)
	}
	w.use(r)
	w.loaded, w.rejected = sum, ""
	w.logger.Info("key registry reloaded", zap.String("path", w.path), zap.Int("keys", r.Len()))
	return true, nil
}

// reject logs why the file was refused, once for each distinct refusal (the
// content for an invalid file, the error for an unreadable one), and returns
// err.
func (w *Watcher) reject(which string, err error) error {
	if which != w.rejected {
		w.logger.Warn("key registry not reloaded; keeping the last good one",
			zap.String("path", w.path), zap.Error(err))
		w.rejected = which
	}
	return err
}

// Run polls the file every interval until ctx is done.
func (w *Watcher) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = w.Reload()
		}
	}
}
