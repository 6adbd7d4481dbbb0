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
	// Spend counts n bytes of key against a quota of quota bytes a day
	// (UTC), unless they would pass it.
	Spend(ctx context.Context, key string, quota, n int64) (Spent, error)
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

// Spent is what Spend decided.
type Spent struct {
	Allowed bool
	// Remaining is how many bytes of the quota are left today.
	Remaining int64
	// ResetAfter is how long until the quota starts again (midnight UTC).
	ResetAfter time.Duration
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
