package caddymodule

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/tokenauth"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/kid-registry/planeclient"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

func init() {
	caddy.RegisterModule(App{})
}

// App is the "hdc" app: the state the edge's handlers share. It holds the
// key source (a registry file reloaded without a restart, or the backend's
// key plane; kept across config reloads) and the bearer token verifier.
type App struct {
	// Keys configures the key source.
	Keys KeysConfig `json:"keys"`
	// Tokens configures the verification of bearer tokens.
	Tokens TokensConfig `json:"tokens,omitempty"`
	// Fresh configures the check of the iat and jti of envelopes.
	Fresh FreshConfig `json:"fresh,omitempty"`

	keys     *keyState
	fresh    *freshness
	verifier *tokenauth.Verifier // nil when no tokens are configured
	logger   *zap.Logger
	stop     context.CancelFunc
	polled   chan struct{} // closed when the follower Start started returns
}

// KeysConfig says where the edge finds the clients' keys: a registry file
// (Registry), or, when Registry is empty once its placeholders are
// replaced, the backends' key plane (Backends). The reference Caddyfile
// gives both: the file when HDC_KEY_REGISTRY names one (a standalone
// edge), else the backend.
type KeysConfig struct {
	// Registry is the path of the registry file; placeholders such as
	// {env.HDC_KEY_REGISTRY} are replaced.
	Registry string `json:"registry,omitempty"`
	// Keeper is the URL of the keeper that wraps the registry's data key
	// (package keeper), replaced like Registry: give it as
	// {env.HDC_KEEPER}, a placeholder replaced when the app starts, so that
	// a key in the URL never appears in the configuration Caddy keeps and
	// serves on its admin API. Empty: a registry of plain secrets only.
	Keeper string `json:"keeper,omitempty"`
	// PollInterval is how often the file is checked for changes (default 2s).
	PollInterval caddy.Duration `json:"poll_interval,omitempty"`

	// Backends are the URLs of the backends' internal listeners, whose
	// key plane the keys are looked up in and followed from, over the hop
	// (HopTLS), instead of a file. Every backend serves the same key plane
	// from the shared database: the edge asks the one that answered last,
	// and the next when it does not answer.
	Backends []string `json:"backends,omitempty"`
	HopTLS
	// CacheSize bounds the keys the edge keeps from the backend (default
	// 100000): it, not the number of keys in the database, bounds the
	// edge's memory.
	CacheSize int `json:"cache_size,omitempty"`
	// LookupRate and LookupBurst bound the look-ups in the backend of
	// kids the edge does not hold (default 100 per second, burst 200);
	// SourceRate and SourceBurst those of one client address (default 10
	// per second, burst 20). A kid the kid filter rules out is never
	// looked up.
	LookupRate  float64 `json:"lookup_rate,omitempty"`
	LookupBurst int     `json:"lookup_burst,omitempty"`
	SourceRate  float64 `json:"source_lookup_rate,omitempty"`
	SourceBurst int     `json:"source_lookup_burst,omitempty"`
	// UnknownTTL is how long a kid the backend does not know is refused
	// without asking again (default 30s; the feed ends it when the key is
	// added).
	UnknownTTL caddy.Duration `json:"unknown_ttl,omitempty"`
}

const (
	defaultPollInterval = 2 * time.Second
	// reloadCooldown bounds the reloads an unknown kid may trigger.
	reloadCooldown = time.Second
	// ciphersKept bounds the ciphers kept, one per key in use.
	ciphersKept = 100_000
)

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "hdc",
		New: func() caddy.Module { return new(App) },
	}
}

// keyPool shares one keyState per key source across config reloads: the
// new config provisions before the old one cleans up, so the keys and the
// last use of each kid carry over.
var keyPool = caddy.NewUsagePool()

// keyState is a key source being followed, with the last use of each kid
// and the ciphers of the keys in use.
type keyState struct {
	source  keySource
	poolKey string
	lastUse sync.Map // kid → *atomic.Int64, Unix nanoseconds
	ciphers *lru.Cache[string, *cachedKey]
	// dummies stand in, by enc, for unknown, retired and foreign keys and
	// for a key of another enc than the envelope's: checking a tag against
	// one costs what checking against a real key costs, and fails.
	dummies map[string]*jwe.Key
}

// cachedKey is a key's cipher, kept while its secret stays the same.
type cachedKey struct {
	secret string
	key    *jwe.Key
}

// newKeyState returns the state of src, shared under poolKey.
func newKeyState(src keySource, poolKey string) *keyState {
	ciphers, _ := lru.New[string, *cachedKey](ciphersKept) // errs only on a size below 1
	return &keyState{source: src, poolKey: poolKey, ciphers: ciphers, dummies: map[string]*jwe.Key{
		jwe.EncA128CBCHS256: jwe.DummyKey(jwe.EncA128CBCHS256), jwe.EncA256GCM: jwe.DummyKey(jwe.EncA256GCM)}}
}

// Destruct implements caddy.Destructor.
func (s *keyState) Destruct() error { return s.source.close() }

// Provision loads the key source and the token verifier.
func (a *App) Provision(ctx caddy.Context) error {
	a.logger = ctx.Logger()
	if err := metrics.register(ctx.GetMetricsRegistry()); err != nil {
		return err
	}
	repl := caddy.NewReplacer()
	poolKey, open, err := a.keySource(repl)
	if err != nil {
		return err
	}
	v, _, err := keyPool.LoadOrNew(poolKey, func() (caddy.Destructor, error) {
		src, err := open(ctx)
		if err != nil {
			return nil, err
		}
		return newKeyState(src, poolKey), nil
	})
	if err != nil {
		return err
	}
	a.keys = v.(*keyState)
	a.fresh = newFreshness(a.Fresh)
	return a.provisionTokens(ctx)
}

// keySource returns the configured source's key in keyPool and how to
// open it.
func (a *App) keySource(repl *caddy.Replacer) (string, func(context.Context) (keySource, error), error) {
	path := repl.ReplaceAll(a.Keys.Registry, "")
	if path == "" {
		return a.backendSource(repl)
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return "", nil, err
	}
	if a.Keys.PollInterval <= 0 {
		a.Keys.PollInterval = caddy.Duration(defaultPollInterval)
	}
	keeperURL := repl.ReplaceAll(a.Keys.Keeper, "")
	// The pool's key names the keeper by a digest: the URL may hold a key.
	poolKey := fmt.Sprintf("%s\x00%x", path, sha256.Sum256([]byte(keeperURL)))
	return poolKey, func(ctx context.Context) (keySource, error) { return a.followRegistry(ctx, path, keeperURL) }, nil
}

// backendSource returns the backends' key plane's key in keyPool and how
// to follow it.
func (a *App) backendSource(repl *caddy.Replacer) (string, func(context.Context) (keySource, error), error) {
	urls := backendURLs(repl, a.Keys.Backends)
	if len(urls) == 0 {
		return "", nil, errors.New("hdc: keys: a registry file or a backend is required")
	}
	url, client, err := a.Keys.backends(repl, "keys", urls, "")
	if err != nil {
		return "", nil, err
	}
	poolKey := fmt.Sprintf("backend\x00%q\x00%x", urls, sha256.Sum256([]byte(fmt.Sprint(a.Keys))))
	return poolKey, func(context.Context) (keySource, error) { return a.followBackend(url, client) }, nil
}

// followBackend makes the source of the backends' key plane at url, with
// a client that fails over to the others.
func (a *App) followBackend(url string, client *http.Client) (keySource, error) {
	c := a.Keys
	src, err := planeclient.New(planeclient.Config{
		URL: url, Client: client, CacheSize: c.CacheSize, LookupRate: c.LookupRate, LookupBurst: c.LookupBurst,
		SourceRate: c.SourceRate, SourceBurst: c.SourceBurst,
		UnknownTTL: time.Duration(c.UnknownTTL), Observer: keyPlaneMetrics{}, Log: a.logger.Named("keys"),
	})
	if err != nil {
		return nil, fmt.Errorf("hdc: keys: %w", err)
	}
	return &backendKeys{source: src}, nil
}

// followRegistry opens the keeper, when one is configured, and loads the
// registry at path with it.
func (a *App) followRegistry(ctx context.Context, path, keeperURL string) (keySource, error) {
	f := &fileKeys{every: time.Duration(a.Keys.PollInterval)}
	var sealer *registryfile.Sealer
	if keeperURL != "" {
		k, err := keeper.Open(ctx, keeperURL)
		if err != nil {
			return nil, fmt.Errorf("hdc: keys: keeper: %w", err)
		}
		f.keeper, sealer = k, registryfile.NewSealer(k)
	}
	w, err := registryfile.NewWatcher(path, sealer, a.logger.Named("keys"), observeRegistry)
	if err != nil {
		f.close()
		return nil, fmt.Errorf("hdc: keys: %w", err)
	}
	observeRegistry(w.Registry(), true, nil)
	f.watcher = w
	return f, nil
}

// observeRegistry keeps the registry metrics current.
func observeRegistry(r *registryfile.Registry, changed bool, err error) {
	switch {
	case err != nil:
		metrics.registryReloads.WithLabelValues("rejected").Inc()
	case changed:
		metrics.registryReloads.WithLabelValues("changed").Inc()
	default:
		metrics.registryReloads.WithLabelValues("unchanged").Inc()
	}
	counts := map[clientkey.Status]int{clientkey.Active: 0, clientkey.Retiring: 0, clientkey.Retired: 0}
	for _, k := range r.Keys() {
		counts[k.Status]++
	}
	for status, n := range counts {
		metrics.registryKeys.WithLabelValues(string(status)).Set(float64(n))
	}
}

// Start follows the key source until Stop.
func (a *App) Start() error {
	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.polled = make(chan struct{})
	go func() {
		defer close(a.polled)
		a.keys.source.run(ctx)
	}()
	return nil
}

// Stop ends the following and waits for it to return.
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

// lookupKey returns the key named kid, whatever its status, for a request
// from the address source: planeclient.ErrUnknown without one,
// planeclient.ErrBusy when it could not be asked for.
func (a *App) lookupKey(ctx context.Context, kid, source string) (*registryfile.Key, error) {
	return a.keys.source.lookup(ctx, kid, source)
}

// cipherFor returns the cipher of a key, built once per secret.
func (a *App) cipherFor(k *registryfile.Key) (*jwe.Key, error) {
	if c, ok := a.keys.ciphers.Get(k.Kid); ok && c.secret == k.Secret && c.key.Enc() == k.ContentEncryption() {
		return c.key, nil
	}
	key, err := jwe.NewKeyFor(k.ContentEncryption(), k.Secret)
	if err != nil {
		return nil, err
	}
	a.keys.ciphers.Add(k.Kid, &cachedKey{secret: k.Secret, key: key})
	return key, nil
}

// touchKey records that kid was used now.
func (a *App) touchKey(kid string) {
	now := time.Now()
	v, ok := a.keys.lastUse.Load(kid)
	if !ok { // a new counter only for a kid's first use, not for every request
		v, _ = a.keys.lastUse.LoadOrStore(kid, new(atomic.Int64))
	}
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
