package caddymodule

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/tokenauth"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/jwe/cbchmac"
	"github.com/health-data-connect/hdc/internal/keeper"
	kidregistry "github.com/health-data-connect/hdc/kid-registry"
)

func init() {
	caddy.RegisterModule(App{})
}

// App is the "hdc" app: the state the edge's handlers share. It holds the key
// registry (reloaded from its file without a restart, and kept across config
// reloads) and the bearer token verifier.
type App struct {
	// Keys configures the key registry.
	Keys KeysConfig `json:"keys"`
	// Tokens configures the verification of bearer tokens.
	Tokens TokensConfig `json:"tokens,omitempty"`

	keys     *keyState
	verifier *tokenauth.Verifier // nil when no tokens are configured
	logger   *zap.Logger
	stop     context.CancelFunc
	polled   chan struct{} // closed when the poller Start started returns
}

// KeysConfig locates the key registry file.
type KeysConfig struct {
	// Registry is the path of the registry file; placeholders such as
	// {env.HDC_KEY_REGISTRY} are replaced.
	Registry string `json:"registry"`
	// Keeper is the URL of the keeper that wraps the registry's data key
	// (package keeper), replaced like Registry: give it as
	// {env.HDC_KEEPER}, a placeholder replaced when the app starts, so that
	// a key in the URL never appears in the configuration Caddy keeps and
	// serves on its admin API. Empty: a registry of plain secrets only.
	Keeper string `json:"keeper,omitempty"`
	// PollInterval is how often the file is checked for changes (default 2s).
	PollInterval caddy.Duration `json:"poll_interval,omitempty"`
}

const (
	defaultPollInterval = 2 * time.Second
	// reloadCooldown bounds the reloads an unknown kid may trigger.
	reloadCooldown = time.Second
)

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "hdc",
		New: func() caddy.Module { return new(App) },
	}
}

// keyPool shares one keyState per registry file across config reloads: the
// new config provisions before the old one cleans up, so the registry and
// the last use of each kid carry over.
var keyPool = caddy.NewUsagePool()

// keyState is a registry file being followed, with the last use of each kid.
type keyState struct {
	path       string
	poolKey    string
	keeper     *keeper.Keeper // nil without one
	watcher    *kidregistry.Watcher
	lastUse    sync.Map // kid → *atomic.Int64, Unix nanoseconds
	lastReload atomic.Int64
	reloads    singleflight.Group // reloads for unknown kids, one at a time
	ciphers    sync.Map           // kid → *cachedKey
	// dummy stands in for unknown, retired and foreign keys: checking a tag
	// against it costs what checking against a real key costs, and fails.
	dummy *cbchmac.Key
}

// cachedKey is a registry key's cipher, kept while its secret stays the same.
type cachedKey struct {
	secret string
	key    *cbchmac.Key
}

// Destruct implements caddy.Destructor.
func (s *keyState) Destruct() error {
	if s.keeper != nil {
		return s.keeper.Close()
	}
	return nil
}

// Provision loads the registry and the token verifier.
func (a *App) Provision(ctx caddy.Context) error {
	a.logger = ctx.Logger()
	if err := metrics.register(ctx.GetMetricsRegistry()); err != nil {
		return err
	}
	repl := caddy.NewReplacer()
	path := repl.ReplaceAll(a.Keys.Registry, "")
	if path == "" {
		return errors.New("hdc: keys: a registry file is required")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if a.Keys.PollInterval <= 0 {
		a.Keys.PollInterval = caddy.Duration(defaultPollInterval)
	}
	keeperURL := repl.ReplaceAll(a.Keys.Keeper, "")
	// The pool's key names the keeper by a digest: the URL may hold a key.
	poolKey := fmt.Sprintf("%s\x00%x", path, sha256.Sum256([]byte(keeperURL)))
	v, _, err := keyPool.LoadOrNew(poolKey, func() (caddy.Destructor, error) {
		st, err := a.followRegistry(ctx, path, keeperURL)
		if err != nil {
			return nil, err
		}
		st.poolKey = poolKey
		return st, nil
	})
	if err != nil {
		return err
	}
	a.keys = v.(*keyState)
	return a.provisionTokens(ctx)
}

// followRegistry opens the keeper, when one is configured, and loads the
// registry at path with it.
func (a *App) followRegistry(ctx context.Context, path, keeperURL string) (*keyState, error) {
	st := &keyState{path: path, dummy: cbchmac.DummyKey()}
	var sealer *kidregistry.Sealer
	if keeperURL != "" {
		k, err := keeper.Open(ctx, keeperURL)
		if err != nil {
			return nil, fmt.Errorf("hdc: keys: keeper: %w", err)
		}
		st.keeper, sealer = k, kidregistry.NewSealer(k)
	}
	w, err := kidregistry.NewWatcher(path, sealer, a.logger.Named("keys"), observeRegistry)
	if err != nil {
		st.Destruct()
		return nil, fmt.Errorf("hdc: keys: %w", err)
	}
	observeRegistry(w.Registry(), true, nil)
	st.watcher = w
	return st, nil
}

// observeRegistry keeps the registry metrics current.
func observeRegistry(r *kidregistry.Registry, changed bool, err error) {
	switch {
	case err != nil:
		metrics.registryReloads.WithLabelValues("rejected").Inc()
	case changed:
		metrics.registryReloads.WithLabelValues("changed").Inc()
	default:
		metrics.registryReloads.WithLabelValues("unchanged").Inc()
	}
	counts := map[kidregistry.Status]int{kidregistry.Active: 0, kidregistry.Retiring: 0, kidregistry.Retired: 0}
	for _, k := range r.Keys() {
		counts[k.Status]++
	}
	for status, n := range counts {
		metrics.registryKeys.WithLabelValues(string(status)).Set(float64(n))
	}
}

// Start polls the registry file until Stop.
func (a *App) Start() error {
	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.polled = make(chan struct{})
	go func() {
		defer close(a.polled)
		a.keys.watcher.Run(ctx, time.Duration(a.Keys.PollInterval))
	}()
	return nil
}

// Stop ends the polling and waits for the poller to return.
func (a *App) Stop() error {
	if a.stop != nil {
		a.stop()
	}
	if a.polled != nil {
		<-a.polled
	}
	return nil
}

// Cleanup releases this config's use of the shared state.
func (a *App) Cleanup() error {
	if a.keys != nil {
		_, err := keyPool.Delete(a.keys.poolKey)
		return err
	}
	return nil
}

// lookupKey returns the key named kid. When the kid is unknown it reloads the
// registry first, at most once per reloadCooldown, so that a key added a
// moment ago works before the next poll. Requests that miss at once share
// one reload and look again after it, as they do after a reload the poller
// or the cooldown's holder made meanwhile: none fails for arriving second.
func (a *App) lookupKey(kid string) (*kidregistry.Key, bool) {
	w := a.keys.watcher
	if k, ok := w.Registry().Lookup(kid); ok {
		return k, true
	}
	a.keys.reloads.Do("", func() (any, error) {
		now := time.Now().UnixNano()
		if now-a.keys.lastReload.Load() >= int64(reloadCooldown) {
			a.keys.lastReload.Store(now)
			_, _ = w.Reload() // a rejected file keeps the current registry
		}
		return nil, nil
	})
	return w.Registry().Lookup(kid)
}

// cipherFor returns the cipher of a registry key, built once per secret.
func (a *App) cipherFor(k *kidregistry.Key) (*cbchmac.Key, error) {
	if v, ok := a.keys.ciphers.Load(k.Kid); ok && v.(*cachedKey).secret == k.Secret {
		return v.(*cachedKey).key, nil
	}
	key, err := jwe.NewKey(k.Secret)
	if err != nil {
		return nil, err
	}
	a.keys.ciphers.Store(k.Kid, &cachedKey{secret: k.Secret, key: key})
	return key, nil
}

// touchKey records that kid was used now.
func (a *App) touchKey(kid string) {
	now := time.Now()
	v, _ := a.keys.lastUse.LoadOrStore(kid, new(atomic.Int64))
	v.(*atomic.Int64).Store(now.UnixNano())
	metrics.keyLastUsed.WithLabelValues(kid).Set(float64(now.UnixNano()) / 1e9)
}

// keyLastUse returns when kid was last used, or the zero time.
func (a *App) keyLastUse(kid string) time.Time {
	v, ok := a.keys.lastUse.Load(kid)
	if !ok {
		return time.Time{}
	}
	return time.Unix(0, v.(*atomic.Int64).Load())
}

// Interface guards
var (
	_ caddy.App          = (*App)(nil)
	_ caddy.Provisioner  = (*App)(nil)
	_ caddy.CleanerUpper = (*App)(nil)
)
