package auth

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// Limiter throttles login attempts per key (a source address, or a source
// address and a client id). An attempt is counted before it is made, so concurrent attempts
// cannot overrun the limit, and returned when it succeeds, so only failures
// accumulate. MemoryLimiter serves one process; StoreLimiter keeps the
// counts in the database, where every replica shares them.
type Limiter interface {
	// Take counts an attempt by key. When key is over its limit nothing is
	// counted, ok is false and wait says when the next attempt may come.
	Take(ctx context.Context, key string) (wait time.Duration, ok bool, err error)
	// Return uncounts an attempt that Take counted and that succeeded.
	Return(ctx context.Context, key string) error
}

// take counts a login attempt against both limiters: the source address's,
// and the (source address, client id) pair's. No number of failures from
// other addresses can refuse a client's login from its own: client secrets
// are high-entropy, so guessing is no threat, and a lockout by client id
// alone would let anyone who knows an id lock its client out. When both
// allow it, take returns a release function that uncounts the attempt (for
// a success). Ids that cannot be a client's (client ids are UUIDs) share
// one key, so made-up ones neither fill memory nor lock anyone out, and a
// secret sent as a client id is not kept.
func (s *Service) take(ctx context.Context, addr, clientID string) (release func(), wait time.Duration, ok bool, err error) {
	if !contract.IsUUID(clientID) {
		clientID = "(malformed)"
	}
	addrKey, clientKey := "addr:"+addr, "client:"+addr+"|"+clientID
	if wait, ok, err := s.cfg.ByAddress.Take(ctx, addrKey); !ok || err != nil {
		return nil, wait, false, err
	}
	// Whatever becomes of the request, what was counted is settled.
	ctx = context.WithoutCancel(ctx)
	giveBack := func(l Limiter, key string) {
		if err := l.Return(ctx, key); err != nil {
			telemetry.Logger(ctx, s.cfg.Log).Error("returning a login attempt failed", zap.Error(err))
		}
	}
	if wait, ok, err := s.cfg.ByClient.Take(ctx, clientKey); !ok || err != nil {
		giveBack(s.cfg.ByAddress, addrKey)
		return nil, wait, false, err
	}
	return func() {
		giveBack(s.cfg.ByAddress, addrKey)
		giveBack(s.cfg.ByClient, clientKey)
	}, 0, true, nil
}

// MemoryLimiter is a Limiter with one token bucket per key: burst attempts,
// refilled at burst per window. It is hand-written rather than built on
// golang.org/x/time/rate because a successful attempt gives its token back,
// which rate.Limiter cannot do outside a Reservation.
//
// It remembers at most maxKeys keys. A key beyond that is not given a
// bucket of its own at the expense of another key's (which would let a
// flood of made-up keys erase a lockout): when no bucket can be forgotten
// because it is full again, new keys share one overflow bucket until room
// comes back.
type MemoryLimiter struct {
	burst    float64
	perSec   float64 // refill rate
	interval time.Duration
	maxKeys  int
	now      func() time.Time

	mu       sync.Mutex
	buckets  map[string]*bucket
	overflow bucket
	// swept is when full buckets were last forgotten; a full table is
	// swept at most once per refill interval, so that a flood of new keys
	// does not make every attempt scan it.
	swept time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewMemoryLimiter allows burst attempts per key, refilled at burst per
// window, and remembers at most maxKeys keys.
func NewMemoryLimiter(burst int, window time.Duration, maxKeys int) *MemoryLimiter {
	return &MemoryLimiter{
		burst:    float64(burst),
		perSec:   float64(burst) / window.Seconds(),
		interval: window / time.Duration(burst),
		maxKeys:  maxKeys,
		now:      time.Now,
		buckets:  map[string]*bucket{},
		overflow: bucket{tokens: float64(burst)},
	}
}

// lookup returns key's bucket refilled up to now: its own, a new full one
// when there is room, or the shared overflow bucket.
func (l *MemoryLimiter) lookup(key string, now time.Time) *bucket {
	b, ok := l.buckets[key]
	if !ok {
		if !l.makeRoom(now) {
			b = &l.overflow
		} else {
			b = &bucket{tokens: l.burst, at: now}
			l.buckets[key] = b
		}
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.perSec)
	b.at = now
	return b
}

// makeRoom reports whether a new bucket fits under maxKeys, forgetting
// the buckets that are full again (which is the same as never having seen
// their keys) when the table is full.
func (l *MemoryLimiter) makeRoom(now time.Time) bool {
	if len(l.buckets) < l.maxKeys {
		return true
	}
	if now.Sub(l.swept) < l.interval {
		return false
	}
	l.swept = now
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.perSec >= l.burst {
			delete(l.buckets, k)
		}
	}
	return len(l.buckets) < l.maxKeys
}

// Take implements Limiter.
func (l *MemoryLimiter) Take(_ context.Context, key string) (time.Duration, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.lookup(key, l.now())
	if b.tokens < 1 {
		wait := time.Duration((1 - b.tokens) / l.perSec * float64(time.Second))
		return wait, false, nil
	}
	b.tokens--
	return 0, true, nil
}

// Return implements Limiter.
func (l *MemoryLimiter) Return(_ context.Context, key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.buckets[key]; !ok && len(l.buckets) < l.maxKeys {
		return nil // forgotten: full already
	}
	b := l.lookup(key, l.now())
	b.tokens = math.Min(l.burst, b.tokens+1)
	return nil
}

// StoreLimiter is a Limiter whose buckets are rows of the store
// (store.Throttle), so that a limit holds however the attempts
// are spread over the replicas sharing the database. It forgets full
// buckets once per window.
type StoreLimiter struct {
	store store.Throttle
	rate  store.Rate
	log   *zap.Logger
	now   func() time.Time
	// nextPrune is when to forget full buckets next, in Unix nanoseconds.
	nextPrune atomic.Int64
}

// NewStoreLimiter allows burst attempts per key, refilled at burst per
// window, counted in s.
func NewStoreLimiter(s store.Throttle, burst int, window time.Duration, log *zap.Logger) *StoreLimiter {
	return &StoreLimiter{store: s, rate: store.Rate{Burst: burst, Per: window}, log: log, now: time.Now}
}

// Take implements Limiter.
func (l *StoreLimiter) Take(ctx context.Context, key string) (time.Duration, bool, error) {
	now := l.now()
	l.prune(ctx, now)
	return l.store.TakeThrottle(ctx, key, l.rate, now)
}

// Return implements Limiter.
func (l *StoreLimiter) Return(ctx context.Context, key string) error {
	return l.store.ReturnThrottle(ctx, key, l.rate, l.now())
}

// prune forgets the full buckets when a window has passed since the last
// time; one caller of the process does it while the others go on.
func (l *StoreLimiter) prune(ctx context.Context, now time.Time) {
	next := l.nextPrune.Load()
	if now.UnixNano() < next || !l.nextPrune.CompareAndSwap(next, now.Add(l.rate.Per).UnixNano()) {
		return
	}
	if _, err := l.store.PruneThrottle(ctx, now); err != nil {
		l.log.Warn("forgetting full login throttling buckets failed", zap.Error(err))
	}
}
