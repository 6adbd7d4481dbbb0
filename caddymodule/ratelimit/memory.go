package ratelimit

import (
	"context"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Memory counts in this process: exact for one edge. Its rates are
// golang.org/x/time/rate's token buckets, which decide as a GCRA of the
// same rate and burst does (a bucket's tokens are the GCRA's tolerance
// left): the module is maintained by the Go team, already the edge's (the
// key plane's look-up rations), and costs no allocation per request;
// throttled/v2's GCRA would add a module for the same answers. It keeps
// the keys most recently used, up to a bound.
type Memory struct {
	buckets *lru.Cache[string, *rate.Limiter]
	mu      sync.Mutex // orders the quotas' check and add
	quotas  *lru.Cache[string, int64]
	now     func() time.Time
}

// NewMemory returns a Memory that keeps up to keys keys of each kind.
func NewMemory(keys int) (*Memory, error) {
	b, err := lru.New[string, *rate.Limiter](keys)
	if err != nil {
		return nil, err
	}
	q, err := lru.New[string, int64](keys)
	if err != nil {
		return nil, err
	}
	return &Memory{buckets: b, quotas: q, now: time.Now}, nil
}

// Allow implements Engine.
func (m *Memory) Allow(_ context.Context, key string, r contract.Rate) (Result, error) {
	if Unlimited(r) {
		return Result{Allowed: true}, nil
	}
	now := m.now()
	l := m.bucket(key, r, now)
	res := l.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return Result{RetryAfter: d, ResetAfter: resetAfter(r, l.TokensAt(now))}, nil
	}
	tokens := l.TokensAt(now)
	return Result{Allowed: true, Remaining: max(0, int(tokens)), ResetAfter: resetAfter(r, tokens)}, nil
}

// bucket returns key's bucket, set to r.
func (m *Memory) bucket(key string, r contract.Rate, now time.Time) *rate.Limiter {
	l, ok := m.buckets.Get(key)
	if !ok {
		l = rate.NewLimiter(rate.Limit(r.PerSecond), r.Burst)
		if prev, found, _ := m.buckets.PeekOrAdd(key, l); found {
			l = prev
		}
	}
	if l.Limit() != rate.Limit(r.PerSecond) {
		l.SetLimitAt(now, rate.Limit(r.PerSecond))
	}
	if l.Burst() != r.Burst {
		l.SetBurstAt(now, r.Burst)
	}
	return l
}

// Reserve implements Engine.
func (m *Memory) Reserve(_ context.Context, key string, quota, least, most int64) (Spent, error) {
	reset, day := untilMidnight(m.now())
	k := day + "\x00" + key
	m.mu.Lock()
	defer m.mu.Unlock()
	used, _ := m.quotas.Get(k)
	left := quota - used
	if left < least {
		return Spent{Remaining: max(0, left), ResetAfter: reset, day: day}, nil
	}
	n := min(most, left)
	m.quotas.Add(k, used+n)
	return Spent{Allowed: true, Granted: n, Remaining: left - n, ResetAfter: reset, day: day}, nil
}

// Release implements Engine.
func (m *Memory) Release(_ context.Context, key string, s Spent, n int64) error {
	k := s.day + "\x00" + key
	m.mu.Lock()
	defer m.mu.Unlock()
	if used, ok := m.quotas.Peek(k); ok {
		m.quotas.Add(k, used-min(n, used))
	}
	return nil
}
