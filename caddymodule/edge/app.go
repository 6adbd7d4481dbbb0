package edge

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/ratelimit"
	"github.com/health-data-connect/hdc/caddymodule/tokenauth"
	"github.com/health-data-connect/hdc/internal/contract"
	kidregistry "github.com/health-data-connect/hdc/kid-registry"
)

func init() {
	caddy.RegisterModule(App{})
}

// App is the "hdc" app: the state the edge's handlers share. It holds the
// key source (a registry file reloaded without a restart, or the backend's
// key plane; kept across config reloads), the bearer token verifier, the
// freshness check of envelopes and the rate limits' counting.
type App struct {
	// Keys configures the key source.
	Keys KeysConfig `json:"keys"`
	// Tokens configures the verification of bearer tokens.
	Tokens TokensConfig `json:"tokens,omitempty"`
	// Fresh configures the check of the iat and jti of envelopes.
	Fresh FreshConfig `json:"fresh,omitempty"`
	// RateLimits are the clients' default limits and where they are
	// counted (hdc_ratelimit).
	RateLimits RateLimitConfig `json:"rate_limits,omitempty"`

	keys     pooledKeys
	fresh    *Freshness
	verifier *tokenauth.Verifier // nil when no tokens are configured
	limiter  *rateLimiter
	logger   *zap.Logger
	stop     context.CancelFunc
	polled   chan struct{} // closed when the follower Start started returns
}

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "hdc",
		New: func() caddy.Module { return new(App) },
	}
}

// AppOf returns the hdc app of the config ctx provisions, for a handler's
// Provision.
func AppOf(ctx caddy.Context) (*App, error) {
	app, err := ctx.App("hdc")
	if err != nil {
		return nil, err
	}
	return app.(*App), nil
}

// keyPool shares the keys of each key source across config reloads: the
// new config provisions before the old one cleans up, so the keys and the
// last use of each kid carry over.
var keyPool = caddy.NewUsagePool()

// pooledKeys is the keys of a source, shared in keyPool.
type pooledKeys struct {
	*kidregistry.Keys
	poolKey string
}

// Destruct implements caddy.Destructor.
func (p pooledKeys) Destruct() error { return p.Close() }

// Provision loads the key source, the token verifier, the freshness check
// and the rate limits' counting.
func (a *App) Provision(ctx caddy.Context) error {
	a.logger = ctx.Logger()
	if err := Metrics.register(ctx.GetMetricsRegistry()); err != nil {
		return err
	}
	repl := caddy.NewReplacer()
	poolKey, open, err := a.Keys.source(repl, a.logger.Named("keys"))
	if err != nil {
		return err
	}
	v, _, err := keyPool.LoadOrNew(poolKey, func() (caddy.Destructor, error) {
		keys, err := open(ctx)
		if err != nil {
			return nil, fmt.Errorf("hdc: keys: %w", err)
		}
		return pooledKeys{keys, poolKey}, nil
	})
	if err != nil {
		return err
	}
	a.keys = v.(pooledKeys)
	a.fresh = newFreshness(a.Fresh)
	if a.limiter, err = a.RateLimits.limiter(repl, a.logger.Named("ratelimit")); err != nil {
		return err
	}
	a.verifier, err = a.Tokens.verifier(repl, a.logger.Named("tokens"))
	return err
}

// Start follows the key source until Stop.
func (a *App) Start() error {
	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.polled = make(chan struct{})
	go func() {
		defer close(a.polled)
		var limits sync.WaitGroup
		limits.Go(func() { a.limiter.run(ctx) })
		a.keys.Run(ctx)
		limits.Wait()
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
	if err := a.limiter.close(); err != nil {
		a.logger.Warn("closing the connections to Redis", zap.Error(err))
	}
	if a.keys.Keys != nil {
		_, err := keyPool.Delete(a.keys.poolKey)
		return err
	}
	return nil
}

// ClientKeys returns the clients' keys, for hdc_jwe and the admin API.
func (a *App) ClientKeys() *kidregistry.Keys { return a.keys.Keys }

// Verifier returns the verifier of access tokens, for hdc_auth; an error
// when the app has no tokens configuration.
func (a *App) Verifier() (*tokenauth.Verifier, error) {
	if a.verifier == nil {
		return nil, errors.New("the hdc app has no tokens configuration (jwks_url or jwks_file)")
	}
	return a.verifier, nil
}

// Freshness returns the check of the iat and jti of envelopes, for hdc_jwe.
func (a *App) Freshness() *Freshness { return a.fresh }

// RateLimiter returns where the clients' requests and upload bytes are
// counted, for hdc_ratelimit.
func (a *App) RateLimiter() ratelimit.Engine { return a.limiter.engine }

// Limits returns client's limits, for hdc_ratelimit: the key plane's
// overrides over the defaults of rate_limits, class by class.
func (a *App) Limits(client string) contract.Limits {
	l := a.RateLimits.defaults()
	if client == "" || a.keys.Keys == nil {
		return l
	}
	if o, ok := a.keys.ClientLimits(client); ok {
		return overridden(l, o)
	}
	return l
}

// Interface guards
var (
	_ caddy.App          = (*App)(nil)
	_ caddy.Provisioner  = (*App)(nil)
	_ caddy.CleanerUpper = (*App)(nil)
)
