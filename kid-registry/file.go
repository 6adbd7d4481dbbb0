package kidregistry

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/kid-registry/planeclient"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// reloadCooldown bounds the reloads an unknown kid may trigger.
const reloadCooldown = time.Second

// FileConfig says which registry file to follow, and how.
type FileConfig struct {
	Path string
	// KeeperURL is the keeper of the file's data key (package keeper);
	// empty for a file of plain secrets only.
	KeeperURL string
	// Every is how often the file is checked for changes.
	Every time.Duration
	Log   *zap.Logger
	// Observe sees each load of the file, and the first.
	Observe func(Load)
}

// Load is the outcome of a load of the registry file: whether it changed
// the keys, or was refused (the last good file stays), and how many keys
// of each status the edge holds.
type Load struct {
	Changed bool
	Err     error
	Keys    map[clientkey.Status]int
}

// observer adapts observe to the watcher's callback.
func observer(observe func(Load)) func(*registryfile.Registry, bool, error) {
	return func(r *registryfile.Registry, changed bool, err error) {
		l := Load{Changed: changed, Err: err, Keys: map[clientkey.Status]int{clientkey.Active: 0, clientkey.Retiring: 0, clientkey.Retired: 0}}
		for _, k := range r.Keys() {
			l.Keys[k.Status]++
		}
		observe(l)
	}
}

// OpenFile opens the keeper, when one is configured, and loads the
// registry file with it.
func OpenFile(ctx context.Context, c FileConfig) (*Keys, error) {
	f := &fileSource{every: c.Every}
	var sealer *registryfile.Sealer
	if c.KeeperURL != "" {
		k, err := keeper.Open(ctx, c.KeeperURL)
		if err != nil {
			return nil, fmt.Errorf("keeper: %w", err)
		}
		f.keeper, sealer = k, registryfile.NewSealer(k)
	}
	observe := observer(c.Observe)
	w, err := registryfile.NewWatcher(c.Path, sealer, c.Log, observe)
	if err != nil {
		f.close()
		return nil, err
	}
	observe(w.Registry(), true, nil)
	f.watcher = w
	return newKeys(f), nil
}

// fileSource is a registry file, followed by polling.
type fileSource struct {
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
func (f *fileSource) lookup(_ context.Context, kid, _ string) (*clientkey.Key, error) {
	if k, ok := f.watcher.Registry().Lookup(kid); ok {
		return &k.Key, nil
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
		return &k.Key, nil
	}
	return nil, ErrUnknown
}

func (f *fileSource) known(kid string) bool {
	_, ok := f.watcher.Registry().Lookup(kid)
	return ok
}

// refused is nil: a registry file's kids are never looked up, so its
// answers say nothing of which exist beyond the one refusal.
func (f *fileSource) refused(string) error { return nil }

// clientLimits: a registry file holds no client's limits; the defaults
// apply to every client.
func (f *fileSource) clientLimits(string) (contract.Limits, bool) { return contract.Limits{}, false }

func (f *fileSource) keys() []clientkey.Key {
	entries := f.watcher.Registry().Keys()
	keys := make([]clientkey.Key, len(entries))
	for i := range entries {
		keys[i] = entries[i].Key
	}
	return keys
}

func (f *fileSource) reload() (bool, int, error) {
	changed, err := f.watcher.Reload()
	return changed, f.watcher.Registry().Len(), err
}

// run polls the file; a standalone edge reports to no one.
func (f *fileSource) run(ctx context.Context, _ planeclient.Uses) { f.watcher.Run(ctx, f.every) }

func (f *fileSource) close() error {
	if f.keeper != nil {
		return f.keeper.Close()
	}
	return nil
}
