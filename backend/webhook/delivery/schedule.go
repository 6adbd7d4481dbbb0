package delivery

import (
	"math/rand/v2"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// Schedule decides what follows a failed attempt: exponential backoff with
// jitter, a subscriber's Retry-After, and giving up at a horizon.
type Schedule struct {
	// Base is the delay after the first failed attempt; it doubles after
	// each further one.
	Base time.Duration
	// Max caps the delay, and with it a Retry-After.
	Max time.Duration
	// Horizon is how long after an event was published its delivery is
	// attempted; the last attempt is made at the horizon.
	Horizon time.Duration
}

// DefaultSchedule retries after about 10 s, 20 s, 40 s, … then every one to
// two hours, for three days: some 45 attempts.
var DefaultSchedule = Schedule{Base: 10 * time.Second, Max: 2 * time.Hour, Horizon: 72 * time.Hour}

// backoff is the delay after the n-th failed attempt (n ≥ 1) before
// jitter: Base·2ⁿ⁻¹, at most Max.
func (s Schedule) backoff(n int) time.Duration {
	d := s.Base
	for i := 1; i < n && d < s.Max; i++ {
		d *= 2
	}
	return min(d, s.Max)
}

// jitter spreads d uniformly over [d/2, d] ("equal jitter"), so that
// deliveries that failed together do not come back together.
func jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + rand.N(d-half+1)
}

// Next is what becomes of delivery d, as claimed, after an attempt started
// at started and ended at now with result r.
//
//   - Delivered: delivered.
//   - Gone (HTTP 410): failed, and the subscription is disabled.
//   - Permanent (a refused address, an endpoint that cannot be requested):
//     failed at once; retrying cannot help.
//   - Anything else is retried after the jittered backoff, or after the
//     subscriber's Retry-After when that is longer (capped at Max), but
//     never later than the horizon. An attempt started at or past the
//     horizon is the last: when it fails the delivery is given up.
func (s Schedule) Next(d store.Delivery, r Result, started, now time.Time) store.Next {
	switch {
	case r.Delivered:
		return store.Next{Status: store.DeliveryDelivered}
	case r.Gone:
		return store.Next{Status: store.DeliveryFailed, DisableSubscription: true}
	case r.Permanent:
		return store.Next{Status: store.DeliveryFailed}
	}
	deadline := d.CreatedAt.Add(s.Horizon)
	if !started.Before(deadline) {
		return store.Next{Status: store.DeliveryFailed}
	}
	at := now.Add(max(jitter(s.backoff(d.Attempts+1)), min(r.RetryAfter, s.Max)))
	if at.After(deadline) {
		at = deadline
	}
	return store.Next{Status: store.DeliveryPending, RetryAt: at}
}
