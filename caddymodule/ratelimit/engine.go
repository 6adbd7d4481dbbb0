package ratelimit

import (
	"context"
	"math"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Engine counts requests against rates and bytes against daily quotas.
type Engine interface {
	// Allow counts one request of key against r.
	Allow(ctx context.Context, key string, r contract.Rate) (Result, error)
	// Reserve counts bytes of key against a quota of quota bytes a day
	// (UTC): as many as today leaves, up to most, and none when it leaves
	// fewer than least (1 or more). An upload of a declared length reserves
	// it whole (least and most alike); a Meter reserves a stream's bytes
	// ahead of its reading.
	Reserve(ctx context.Context, key string, quota, least, most int64) (Spent, error)
	// Release gives back n of the bytes s counted for key, on the day it
	// counted them, and never more than that day's count: what a Meter
	// reserved and its stream did not use.
	Release(ctx context.Context, key string, s Spent, n int64) error
}

// Result is what Allow decided.
type Result struct {
	Allowed bool
	// Remaining is how many more requests would be allowed now.
	Remaining int
	// RetryAfter is how long until a refused request would be allowed.
	RetryAfter time.Duration
	// ResetAfter is how long until the whole burst is available again.
	ResetAfter time.Duration
}

// Spent is what Reserve decided.
type Spent struct {
	Allowed bool
	// Granted is how many bytes were counted, when Allowed.
	Granted int64
	// Remaining is how many bytes of the quota are left today.
	Remaining int64
	// ResetAfter is how long until the quota starts again (midnight UTC).
	ResetAfter time.Duration

	day     string // the UTC day of the count, where Release gives back
	inRedis bool   // counted in Redis, not in memory (a Fleet's Release)
}

// Unlimited reports whether r sets no limit.
func Unlimited(r contract.Rate) bool { return r.PerSecond <= 0 || r.Burst <= 0 }

// untilMidnight returns how long until the next UTC day, and today's date.
func untilMidnight(now time.Time) (time.Duration, string) {
	now = now.UTC()
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return next.Sub(now), now.Format("2006-01-02")
}

// resetAfter is how long a bucket of rate r with tokens left takes to fill.
func resetAfter(r contract.Rate, tokens float64) time.Duration {
	missing := math.Max(0, float64(r.Burst)-tokens)
	return time.Duration(missing / r.PerSecond * float64(time.Second))
}

// Share returns r at share (0 < share ≤ 1) of its rate and burst: an
// edge's part of a fleet's limit, the burst at least 1.
func Share(r contract.Rate, share float64) contract.Rate {
	if share <= 0 || share >= 1 {
		return r
	}
	return contract.Rate{PerSecond: r.PerSecond * share, Burst: max(1, int(math.Ceil(float64(r.Burst)*share)))}
}
