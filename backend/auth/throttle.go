package auth

import (
	"math"
	"sync"
	"time"
)

// Limiter throttles login attempts per key (a client id or a source
// address). An attempt is counted before it is made, so concurrent attempts
// cannot overrun the limit, and returned when it succeeds, so only failures
// accumulate. The in-memory implementation serves one replica; a shared one
// (in the database) can replace it behind this interface.
type Limiter interface {
	// Take counts an attempt by key. When key is over its limit nothing is
	// counted, ok is false and wait says when the next attempt may come.
	Take(key string) (wait time.Duration, ok bool)
	// Return uncounts an attempt that Take counted and that succeeded.
	Return(key string)
}

// MemoryLimiter is a Limiter with one token bucket per key: burst attempts,
// refilled at burst per window. It is hand-written rather than built on
// golang.org/x/time/rate because a successful attempt gives its token back,
// which rate.Limiter cannot do outside a Reservation.
type MemoryLimiter struct {
	burst   float64
	perSec  float64 // refill rate
	maxKeys int
	now     func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewMemoryLimiter allows burst attempts per key, refilled at burst per
// window, and remembers at most maxKeys keys: beyond that it forgets full
// buckets first, then arbitrary ones, so memory stays bounded whatever
// keys an attacker makes up.
func NewMemoryLimiter(burst int, window time.Duration, maxKeys int) *MemoryLimiter {
	return &MemoryLimiter{
		burst:   float64(burst),
		perSec:  float64(burst) / window.Seconds(),
		maxKeys: maxKeys,
		now:     time.Now,
		buckets: map[string]*bucket{},
	}
}

// level returns key's bucket refilled up to now, creating a full one.
func (l *MemoryLimiter) level(key string, now time.Time) *bucket {
	b, ok := l.buckets[key]
	if !ok {
		l.makeRoom(now)
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
		return b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.perSec)
	b.at = now
	return b
}

// makeRoom drops buckets until a new one fits under maxKeys.
func (l *MemoryLimiter) makeRoom(now time.Time) {
	if len(l.buckets) < l.maxKeys {
		return
	}
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.perSec >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < l.maxKeys {
			break
		}
		delete(l.buckets, k)
	}
}

// Take implements Limiter.
func (l *MemoryLimiter) Take(key string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.level(key, l.now())
	if b.tokens < 1 {
		wait := time.Duration((1 - b.tokens) / l.perSec * float64(time.Second))
		return wait, false
	}
	b.tokens--
	return 0, true
}

// Return implements Limiter.
func (l *MemoryLimiter) Return(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.level(key, l.now())
	b.tokens = math.Min(l.burst, b.tokens+1)
}
