package store

import (
	"context"
	"fmt"
	"time"
)

// Throttle is login throttling shared by every process on the database
// (package auth). Each key (a client id or a source address) has a token
// bucket of rate.Burst attempts, refilled at rate.Burst per rate.Per, kept
// as the time at which the bucket will be full again (the generic cell rate
// algorithm); a key never seen has a full bucket.
type Throttle interface {
	// TakeThrottle spends one attempt from key's bucket at now and reports
	// ok; when the bucket is empty it spends nothing and reports how long
	// until the next attempt is allowed. Concurrent takes, in any number of
	// processes, never spend more than the bucket holds.
	TakeThrottle(ctx context.Context, key string, rate Rate, now time.Time) (wait time.Duration, ok bool, err error)
	// ReturnThrottle gives an attempt back to key's bucket, which never
	// holds more than rate.Burst.
	ReturnThrottle(ctx context.Context, key string, rate Rate, now time.Time) error
	// PruneThrottle forgets the keys whose buckets are full at now and
	// returns how many it forgot.
	PruneThrottle(ctx context.Context, now time.Time) (int64, error)
}

// Rate is a throttling rate: Burst attempts at once, refilled at Burst per
// Per.
type Rate struct {
	Burst int
	Per   time.Duration
}

// Interval is the time one attempt takes to refill, 0 for a rate without
// attempts. A bucket whose full time runs ahead of now by more than
// Burst × Interval is empty.
func (r Rate) Interval() time.Duration {
	if r.Burst <= 0 || r.Per <= 0 {
		return 0
	}
	return r.Per / time.Duration(r.Burst)
}

// ThrottleEngine is an engine's side of TakeThrottle: statements with no
// decision of their own.
type ThrottleEngine interface {
	// AdvanceThrottle moves key's full time one interval later (from now,
	// if it is behind now) unless that would take it more than capacity
	// ahead of now, atomically, and reports whether it did. A key it does
	// not know starts full.
	AdvanceThrottle(ctx context.Context, key string, now time.Time, interval, capacity time.Duration) (bool, error)
	// ThrottleFull returns key's full time; ok is false for a key it does
	// not know (pruned: full).
	ThrottleFull(ctx context.Context, key string) (full time.Time, ok bool, err error)
}

// Take is Throttle.TakeThrottle for engines, over the generic cell rate
// algorithm: a bucket is its full time, which every attempt moves one
// interval later, and which may run at most the bucket's capacity (Burst
// intervals) ahead of now. A refused attempt is told when the next one
// fits; another take may change the bucket between the two statements,
// which only makes that estimate a little early or late.
func Take(ctx context.Context, e ThrottleEngine, key string, rate Rate, now time.Time) (time.Duration, bool, error) {
	interval := rate.Interval()
	if interval <= 0 {
		return 0, false, fmt.Errorf("store: throttle rate %+v has no attempts", rate)
	}
	capacity := interval * time.Duration(rate.Burst)
	if ok, err := e.AdvanceThrottle(ctx, key, now, interval, capacity); err != nil || ok {
		return 0, ok, err
	}
	full, ok, err := e.ThrottleFull(ctx, key)
	switch {
	case err != nil:
		return 0, false, err
	case !ok:
		return interval, false, nil
	}
	return max(full.Add(interval).Sub(now)-capacity, time.Microsecond), false, nil
}
