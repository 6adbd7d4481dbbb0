package caddymodule

import (
	"context"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/kid-registry/planeclient"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// keySource is where the edge finds the clients' keys: a registry file
// (fileKeys) or the backend's key plane (backendKeys).
type keySource interface {
	// lookup returns the key kid, whatever its status; it may ask, on
	// behalf of the request from the address source. Its errors are
	// planeclient.ErrUnknown and planeclient.ErrBusy.
	lookup(ctx context.Context, kid, source string) (*registryfile.Key, error)
	// known reports whether kid is a key the edge holds, without asking:
	// only such kids become metric labels and log fields.
	known(kid string) bool
	// keys returns the keys the edge holds.
	keys() []registryfile.Key
	// reload re-reads the file, or empties the backend's cache; it
	// returns whether the keys changed and how many the edge holds.
	reload() (changed bool, n int, err error)
	// run follows the source until ctx is done.
	run(ctx context.Context)
	// close releases what the source holds.
	close() error
}

// fileKeys is a registry file, followed by polling.
type fileKeys struct {
	watcher    *registryfile.Watcher
	keeper     *keeper.Keeper // nil without one
	every      time.Duration
	lastReload atomic.Int64
	reloads    singleflight.Group // reloads for unknown kids, one at a time
}

// lookup returns the key named kid. When the kid is unknown it reloads the
// registry first, at most once per reloadCooldown, so that a key added a
// moment ago works before the next poll. Requests that miss at once share
// one reload and look again after it, as they do after a reload the poller
// or the cooldown's holder made meanwhile: none fails for arriving second.
func (f *fileKeys) lookup(_ context.Context, kid, _ string) (*registryfile.Key, error) {
	if k, ok := f.watcher.Registry().Lookup(kid); ok {
		return k, nil
	}
	f.reloads.Do("", func() (any, error) {
		now := time.Now().UnixNano()
		if now-f.lastReload.Load() >= int64(reloadCooldown) {
			f.lastReload.Store(now)
			_, _ = f.watcher.Reload() // a rejected file keeps the current registry
		}
		return nil, nil
	})
	if k, ok := f.watcher.Registry().Lookup(kid); ok {
		return k, nil
	}
	return nil, planeclient.ErrUnknown
}

func (f *fileKeys) known(kid string) bool {
	_, ok := f.watcher.Registry().Lookup(kid)
	return ok
}

func (f *fileKeys) keys() []registryfile.Key { return f.watcher.Registry().Keys() }

func (f *fileKeys) reload() (bool, int, error) {
	changed, err := f.watcher.Reload()
	return changed, f.watcher.Registry().Len(), err
}

func (f *fileKeys) run(ctx context.Context) { f.watcher.Run(ctx, f.every) }

func (f *fileKeys) close() error {
	if f.keeper != nil {
		return f.keeper.Close()
	}
	return nil
}

// backendKeys is the backend's key plane.
type backendKeys struct {
	source *planeclient.Source
}

func (b *backendKeys) lookup(ctx context.Context, kid, source string) (*registryfile.Key, error) {
	return b.source.Lookup(ctx, kid, source)
}

func (b *backendKeys) known(kid string) bool { return b.source.Cached(kid) }

func (b *backendKeys) keys() []registryfile.Key { return b.source.Keys() }

func (b *backendKeys) reload() (bool, int, error) {
	b.source.Forget()
	return true, 0, nil
}

func (b *backendKeys) run(ctx context.Context) { b.source.Run(ctx) }

func (b *backendKeys) close() error { return nil }

// keyPlaneMetrics observes a key plane source in the edge's metrics.
type keyPlaneMetrics struct{}

func (keyPlaneMetrics) Lookup(result string) { metrics.keyLookups.WithLabelValues(result).Inc() }

func (keyPlaneMetrics) Feed(up bool, applied int64) {
	v := 0.0
	if up {
		v = 1
	}
	metrics.keyFeedUp.Set(v)
	metrics.keyFeedApplied.Set(float64(applied))
}
