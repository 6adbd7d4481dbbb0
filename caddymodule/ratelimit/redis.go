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

// keyPrefix names this gateway's keys in a Redis it may share: the
// quotas' are hdc:rl:q:*, the rates' rate:hdc:rl:* (redis_rate puts its
// own prefix first), the two patterns an ACL user of the edges is given.
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

// reserveScript adds to the day's count KEYS[1] as many bytes as the
// quota ARGV[3] leaves, up to ARGV[2], unless it leaves fewer than
// ARGV[1]; the count expires after ARGV[4] seconds. It answers {1 if
// added, the bytes added, the count}.
var reserveScript = redis.NewScript(`
local used = tonumber(redis.call("GET", KEYS[1]) or "0")
local least, most, quota = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if quota - used < least then
  return {0, 0, used}
end
local n = math.min(most, quota - used)
used = redis.call("INCRBY", KEYS[1], n)
redis.call("EXPIRE", KEYS[1], ARGV[4])
return {1, n, used}
`)

// releaseScript takes ARGV[1] bytes off the day's count KEYS[1], never
// below 0, and creates no count: one that expired stays gone. DECRBY
// keeps the count's expiry. It answers the count.
var releaseScript = redis.NewScript(`
local used = tonumber(redis.call("GET", KEYS[1]) or "0")
local n = math.min(tonumber(ARGV[1]), used)
if n > 0 then
  used = redis.call("DECRBY", KEYS[1], n)
end
return used
`)

// quotaKey is the key of key's count of the UTC day day.
func quotaKey(day, key string) string { return keyPrefix + "q:" + day + ":" + key }

// Reserve implements Engine.
func (r *Redis) Reserve(ctx context.Context, key string, quota, least, most int64) (Spent, error) {
	reset, day := untilMidnight(r.now())
	ttl := int64(reset/time.Second) + 3600 // an hour past midnight: clocks differ
	v, err := reserveScript.Run(ctx, r.client, []string{quotaKey(day, key)}, least, most, quota, ttl).Int64Slice()
	if err != nil {
		return Spent{}, err
	}
	if len(v) != 3 {
		return Spent{}, redis.Nil
	}
	return Spent{Allowed: v[0] == 1, Granted: v[1], Remaining: max(0, quota-v[2]), ResetAfter: reset, day: day, inRedis: true}, nil
}

// Release implements Engine.
func (r *Redis) Release(ctx context.Context, key string, s Spent, n int64) error {
	return releaseScript.Run(ctx, r.client, []string{quotaKey(s.day, key)}, n).Err()
}
