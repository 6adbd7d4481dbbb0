package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"

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
	// request bodies of the uploads route as sent); 0: none.
	UploadBytesPerDay int64 `json:"upload_bytes_per_day,omitempty"`
	// Redis is the URL (redis:// or rediss://) of the Redis the fleet's
	// edges count in, placeholders replaced: give it as
	// {env.HDC_RATELIMIT_REDIS}, so that its password never appears in the
	// configuration Caddy keeps. Empty: each edge counts in memory.
	Redis string `json:"redis,omitempty"`
	// Edges is the number of edges counting in Redis: while Redis does
	// not answer, each counts alone at 1/Edges of each limit (default 1).
	Edges int `json:"edges,omitempty"`
	// Keys bounds the clients and addresses counted in memory (default
	// 100000, the least recent forgotten).
	Keys int `json:"keys,omitempty"`
}

// rateLimiter is the App's counting, shared by its hdc_ratelimit handlers.
type rateLimiter struct {
	engine ratelimit.Engine
	fleet  *ratelimit.Fleet // nil without Redis
	redis  *redis.Client    // nil without Redis
}

// redisTimeout bounds a call to Redis: past it, the edge counts alone.
const redisTimeout = 250 * time.Millisecond

// provisionRateLimits builds the engine the configuration names.
func (a *App) provisionRateLimits(repl *caddy.Replacer) error {
	c := a.RateLimits
	for class, r := range c.Rates {
		if !knownClass(class) || r.PerSecond < 0 || r.Burst < 0 {
			return fmt.Errorf("hdc: rate_limits: %s: a class of %v and a rate and burst of 0 or more, please", class, knownClasses)
		}
	}
	keys := c.Keys
	if keys <= 0 {
		keys = 100_000
	}
	local, err := ratelimit.NewMemory(keys)
	if err != nil {
		return err
	}
	a.limiter = &rateLimiter{engine: local}
	url := repl.ReplaceAll(c.Redis, "")
	if url == "" {
		return nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return errors.New("hdc: rate_limits: redis is not a redis:// URL") // the URL may hold a password
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = redisTimeout, redisTimeout, redisTimeout, redisTimeout
	opt.MaxRetries = -1 // a failure turns to local counting at once
	client := redis.NewClient(opt)
	share := 1.0
	if c.Edges > 1 {
		share = 1 / float64(c.Edges)
	}
	a.limiter.redis = client
	a.limiter.fleet = ratelimit.NewFleet(ratelimit.NewRedis(client), local, ratelimit.FleetConfig{
		Share: share, Timeout: redisTimeout, Shared: observeShared, Log: a.logger.Named("ratelimit")})
	a.limiter.engine = a.limiter.fleet
	return nil
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
	metrics.rateLimitShared.WithLabelValues().Set(v)
}

// knownClasses are the route classes, in the order the docs list them.
var knownClasses = []contract.RouteClass{contract.ClassLogin, contract.ClassReads, contract.ClassWrites, contract.ClassUploads}

func knownClass(c contract.RouteClass) bool {
	for _, k := range knownClasses {
		if k == c {
			return true
		}
	}
	return false
}

// limitsOf returns client's limits: the key plane's overrides over the
// defaults, class by class.
func (a *App) limitsOf(client string) contract.Limits {
	l := contract.Limits{Rates: a.RateLimits.Rates, UploadBytesPerDay: a.RateLimits.UploadBytesPerDay}
	if client == "" || a.keys.Keys == nil {
		return l
	}
	o, ok := a.keys.ClientLimits(client)
	if !ok {
		return l
	}
	if len(o.Rates) > 0 {
		merged := make(map[contract.RouteClass]contract.Rate, len(knownClasses))
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
