package edge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/ratelimit"
	"github.com/health-data-connect/hdc/internal/contract"
)

// RateLimitConfig is every client's default limits and where they are
// counted; the backend's key plane overrides them per client.
type RateLimitConfig struct {
	// Rates are the default rate of each route class; a class missing,
	// or of no rate, is not limited.
	Rates map[contract.RouteClass]contract.Rate `json:"rates,omitempty"`
	// UploadBytesPerDay is the default daily quota of upload bytes (the
	// request bodies of the uploads route as the edge reads them); 0: none.
	UploadBytesPerDay int64 `json:"upload_bytes_per_day,omitempty"`
	// Redis is the URL (redis://, rediss:// or unix://) of the Redis the
	// fleet's edges count in, placeholders replaced; it may name the ACL
	// user, never hold its password. Empty: each edge counts in memory.
	Redis string `json:"redis,omitempty"`
	// RedisPassword is the user's password as a placeholder, such as
	// {env.HDC_RATELIMIT_REDIS_PASSWORD}: a literal is refused, as the
	// configuration Caddy keeps, and its admin API serves, would hold it.
	RedisPassword string `json:"redis_password,omitempty"`
	// RedisPasswordFile names a file that holds the password instead.
	RedisPasswordFile string `json:"redis_password_file,omitempty"`
	// RedisCA is a PEM file of the authorities a rediss:// server's
	// certificate must chain to (default: the system's).
	RedisCA string `json:"redis_ca,omitempty"`
	// RedisAllowUnauthenticated lets the edge count in a Redis without a
	// password on an address other than loopback; without it, such a
	// configuration is refused, as whoever reaches that Redis controls
	// every client's allowance.
	RedisAllowUnauthenticated bool `json:"redis_allow_unauthenticated,omitempty"`
	// Edges is the number of edges counting in Redis: while Redis does
	// not answer, each counts alone at 1/Edges of each limit (default 1).
	Edges int `json:"edges,omitempty"`
	// Keys bounds the clients and addresses counted in memory (default
	// 100000, the least recent forgotten).
	Keys int `json:"keys,omitempty"`
}

// rateLimiter is the app's counting, shared by its hdc_ratelimit handlers.
type rateLimiter struct {
	engine ratelimit.Engine
	fleet  *ratelimit.Fleet // nil without Redis
	redis  *redis.Client    // nil without Redis
}

// redisTimeout bounds a call to Redis: past it, the edge counts alone.
const redisTimeout = 250 * time.Millisecond

// limiter builds the counting the configuration names.
func (c *RateLimitConfig) limiter(repl *caddy.Replacer, logger *zap.Logger) (*rateLimiter, error) {
	for class, r := range c.Rates {
		if !slices.Contains(contract.RouteClasses, class) || r.PerSecond < 0 || r.Burst < 0 {
			return nil, fmt.Errorf("hdc: rate_limits: %s: a class of %v and a rate and burst of 0 or more, please", class, contract.RouteClasses)
		}
	}
	keys := c.Keys
	if keys <= 0 {
		keys = 100_000
	}
	local, err := ratelimit.NewMemory(keys)
	if err != nil {
		return nil, err
	}
	opt, err := c.RedisOptions(repl)
	if err != nil {
		return nil, fmt.Errorf("hdc: %w", err)
	}
	if opt == nil {
		return &rateLimiter{engine: local}, nil
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = redisTimeout, redisTimeout, redisTimeout, redisTimeout
	opt.MaxRetries = -1 // a failure turns to local counting at once
	client := redis.NewClient(opt)
	share := 1.0
	if c.Edges > 1 {
		share = 1 / float64(c.Edges)
	}
	fleet := ratelimit.NewFleet(ratelimit.NewRedis(client), local, ratelimit.FleetConfig{
		Share: share, Timeout: redisTimeout, Shared: observeShared, Log: logger})
	return &rateLimiter{engine: fleet, fleet: fleet, redis: client}, nil
}

// RedisOptions returns the options of the Redis the configuration names,
// its placeholders replaced with repl, or nil for none. It refuses a
// password written in the configuration or in the URL, and a Redis
// without a password on an address other than loopback unless allowed;
// no error it returns holds the password.
func (c RateLimitConfig) RedisOptions(repl *caddy.Replacer) (*redis.Options, error) {
	url := repl.ReplaceAll(c.Redis, "")
	if url == "" {
		return nil, nil
	}
	if c.RedisPassword != "" && !isPlaceholder(c.RedisPassword) {
		return nil, errors.New("rate_limits: redis_password is written in the configuration, which Caddy's admin API serves: " +
			"give it as a placeholder, {env.HDC_RATELIMIT_REDIS_PASSWORD}, or use redis_password_file")
	}
	opt, err := ratelimit.RedisConfig{URL: url, Password: repl.ReplaceAll(c.RedisPassword, ""),
		PasswordFile: repl.ReplaceAll(c.RedisPasswordFile, ""), CAFile: repl.ReplaceAll(c.RedisCA, ""),
		AllowUnauthenticated: c.RedisAllowUnauthenticated}.Options()
	if err != nil {
		return nil, fmt.Errorf("rate_limits: redis: %w (%s)", err, redisSettings)
	}
	return opt, nil
}

// redisSettings names where the reference Caddyfile reads the Redis's
// settings, for an operator told one is wrong.
const redisSettings = "the reference Caddyfile reads the URL from HDC_RATELIMIT_REDIS, the password from " +
	"HDC_RATELIMIT_REDIS_PASSWORD_FILE or HDC_RATELIMIT_REDIS_PASSWORD, the CA from HDC_RATELIMIT_REDIS_CA, " +
	"and HDC_RATELIMIT_REDIS_ALLOW_UNAUTHENTICATED=true allows a Redis without a password off this host; docs/configuration.md"

// isPlaceholder reports whether s is one placeholder, {env.NAME} say,
// which the configuration keeps as it is.
func isPlaceholder(s string) bool {
	return len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}' && strings.Count(s, "{") == 1 && strings.Count(s, "}") == 1
}

// run follows Redis while it does not answer, until ctx is done.
func (l *rateLimiter) run(ctx context.Context) {
	if l != nil && l.fleet != nil {
		l.fleet.Run(ctx)
	}
}

// close releases the connections to Redis.
func (l *rateLimiter) close() error {
	if l != nil && l.redis != nil {
		return l.redis.Close()
	}
	return nil
}

// observeShared sets the gauge of where the edge counts.
func observeShared(shared bool) {
	v := 0.0
	if shared {
		v = 1
	}
	Metrics.rateLimitShared.WithLabelValues().Set(v)
}

// defaults are every client's limits, unless the key plane overrides them.
func (c *RateLimitConfig) defaults() contract.Limits {
	return contract.Limits{Rates: c.Rates, UploadBytesPerDay: c.UploadBytesPerDay}
}

// overridden returns the limits l with a client's overrides o, class by
// class.
func overridden(l, o contract.Limits) contract.Limits {
	if len(o.Rates) > 0 {
		merged := make(map[contract.RouteClass]contract.Rate, len(contract.RouteClasses))
		for k, v := range l.Rates {
			merged[k] = v
		}
		for k, v := range o.Rates {
			merged[k] = v
		}
		l.Rates = merged
	}
	if o.UploadBytesPerDay > 0 {
		l.UploadBytesPerDay = o.UploadBytesPerDay
	}
	return l
}
