package edge

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	kidregistry "github.com/health-data-connect/hdc/kid-registry"
)

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

// defaultPollInterval is how often a registry file is checked by default.
const defaultPollInterval = 2 * time.Second

// openKeys opens the keys of a source.
type openKeys func(context.Context) (*kidregistry.Keys, error)

// source returns the configured source's key in keyPool and how to open
// it.
func (c *KeysConfig) source(repl *caddy.Replacer, logger *zap.Logger) (string, openKeys, error) {
	path := repl.ReplaceAll(c.Registry, "")
	if path == "" {
		return c.backendSource(repl, logger)
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return "", nil, err
	}
	if c.PollInterval <= 0 {
		c.PollInterval = caddy.Duration(defaultPollInterval)
	}
	fc := kidregistry.FileConfig{Path: path, KeeperURL: repl.ReplaceAll(c.Keeper, ""),
		Every: time.Duration(c.PollInterval), Log: logger, Observe: observeRegistry}
	// The pool's key names the keeper by a digest: the URL may hold a key.
	poolKey := fmt.Sprintf("%s\x00%x", path, sha256.Sum256([]byte(fc.KeeperURL)))
	return poolKey, func(ctx context.Context) (*kidregistry.Keys, error) { return kidregistry.OpenFile(ctx, fc) }, nil
}

// backendSource returns the backends' key plane's key in keyPool and how
// to follow it, with a client that fails over between them.
func (c *KeysConfig) backendSource(repl *caddy.Replacer, logger *zap.Logger) (string, openKeys, error) {
	urls := backendURLs(repl, c.Backends)
	if len(urls) == 0 {
		return "", nil, errors.New("hdc: keys: a registry file or a backend is required")
	}
	url, client, err := c.backends(repl, "keys", urls, "")
	if err != nil {
		return "", nil, err
	}
	pc := kidregistry.PlaneConfig{
		URL: url, Client: client, CacheSize: c.CacheSize, LookupRate: c.LookupRate, LookupBurst: c.LookupBurst,
		SourceRate: c.SourceRate, SourceBurst: c.SourceBurst,
		UnknownTTL: time.Duration(c.UnknownTTL), Observer: keyPlaneMetrics{}, Log: logger,
	}
	poolKey := fmt.Sprintf("backend\x00%q\x00%x", urls, sha256.Sum256([]byte(fmt.Sprint(*c))))
	return poolKey, func(context.Context) (*kidregistry.Keys, error) { return kidregistry.FollowPlane(pc) }, nil
}

// observeRegistry keeps the registry metrics current.
func observeRegistry(l kidregistry.Load) {
	switch {
	case l.Err != nil:
		Metrics.registryReloads.WithLabelValues("rejected").Inc()
	case l.Changed:
		Metrics.registryReloads.WithLabelValues("changed").Inc()
	default:
		Metrics.registryReloads.WithLabelValues("unchanged").Inc()
	}
	for status, n := range l.Keys {
		Metrics.registryKeys.WithLabelValues(string(status)).Set(float64(n))
	}
}

// keyPlaneMetrics observes a key plane source in the edge's metrics.
type keyPlaneMetrics struct{}

func (keyPlaneMetrics) Lookup(result string) { Metrics.keyLookups.WithLabelValues(result).Inc() }

func (keyPlaneMetrics) Feed(up bool, applied int64) {
	v := 0.0
	if up {
		v = 1
	}
	Metrics.keyFeedUp.WithLabelValues().Set(v)
	Metrics.keyFeedApplied.WithLabelValues().Set(float64(applied))
}
