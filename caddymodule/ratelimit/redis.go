package ratelimit

import (
	"context"
	"math"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Redis counts in Redis, shared by every edge of a fleet: the rates with
// go-redis/redis_rate's GCRA script (one round trip, Redis's clock), the
// quotas with a script that adds the bytes unless they would pass the
// quota.
type Redis struct {
	client  *redis.Client
	limiter *redis_rate.Limiter
	now     func() time.Time
}

// keyPrefix names this gateway's keys in a Redis it may share.
const keyPrefix = "hdc:rl:"

// NewRedis returns a Redis engine on client.
func NewRedis(client *redis.Client) *Redis {
	return &Redis{client: client, limiter: redis_rate.NewLimiter(client), now: time.Now}
}

// Ping asks Redis whether it answers.
func (r *Redis) Ping(ctx context.Context) error { return r.client.Ping(ctx).Err() }

// Allow implements Engine.
func (r *Redis) Allow(ctx context.Context, key string, rt contract.Rate) (Result, error) {
	if Unlimited(rt) {
		return Result{Allowed: true}, nil
	}
	res, err := r.limiter.Allow(ctx, keyPrefix+key, limitOf(rt))
	if err != nil {
		return Result{}, err
	}
	return Result{Allowed: res.Allowed > 0, Remaining: res.Remaining, RetryAfter: max(0, res.RetryAfter),
		ResetAfter: max(0, res.ResetAfter)}, nil
}

// limitOf is rt as redis_rate counts: a whole number of requests a
// period, a second for a rate of one a second or more, else the period
// of one request.
func limitOf(rt contract.Rate) redis_rate.Limit {
	if rt.PerSecond >= 1 {
		return redis_rate.Limit{Rate: int(math.Round(rt.PerSecond)), Burst: rt.Burst, Period: time.Second}
	}
	return redis_rate.Limit{Rate: 1, Burst: rt.Burst, Period: time.Duration(float64(time.Second) / rt.PerSecond)}
}

// spendScript adds ARGV[1] bytes to the day's count KEYS[1] unless they
// would pass the quota ARGV[2]; the count expires after ARGV[3] seconds.
// It answers {1 if added, the count}.
var spendScript = redis.NewScript(`
local used = tonumber(redis.call("GET", KEYS[1]) or "0")
local n, quota = tonumber(ARGV[1]), tonumber(ARGV[2])
if used + n > quota then
  return {0, used}
end
used = redis.call("INCRBY", KEYS[1], n)
redis.call("EXPIRE", KEYS[1], ARGV[3])
return {1, used}
`)

// Spend implements Engine.
func (r *Redis) Spend(ctx context.Context, key string, quota, n int64) (Spent, error) {
	reset, day := untilMidnight(r.now())
	ttl := int64(reset/time.Second) + 3600 // an hour past midnight: clocks differ
	v, err := spendScript.Run(ctx, r.client, []string{keyPrefix + "q:" + day + ":" + key}, n, quota, ttl).Int64Slice()
	if err != nil {
		return Spent{}, err
	}
	if len(v) != 2 {
		return Spent{}, redis.Nil
	}
	return Spent{Allowed: v[0] == 1, Remaining: max(0, quota-v[1]), ResetAfter: reset}, nil
}
