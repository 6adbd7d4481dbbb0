package ratelimit

import (
	"context"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Fleet counts in Redis and, while Redis does not answer, in memory at
// this edge's share of each limit, never failing a request for it. It
// turns to memory at the first request or check Redis fails (within
// Timeout), and back to Redis at the first Ping that answers after; Run
// pings every ProbeEvery meanwhile, and every CheckEvery while Redis
// answers, so that an edge without traffic knows too.
type Fleet struct {
	redis *Redis
	local *Memory
	cfg   FleetConfig
	down  atomic.Bool
	// failed wakes Run when a request turns the fleet to counting alone,
	// so that it probes from then on, not at its next periodic check.
	failed chan struct{}
}

// FleetConfig configures a Fleet.
type FleetConfig struct {
	// Share is this edge's share of each limit while it counts alone
	// (1/number of edges; default 1).
	Share float64
	// Timeout bounds a call to Redis (default 250ms).
	Timeout time.Duration
	// ProbeEvery is how often Redis is pinged while it does not answer
	// (default 500ms).
	ProbeEvery time.Duration
	// CheckEvery is how often Redis is pinged while it answers (default
	// 10s), well within the minute the alert on counting alone waits.
	CheckEvery time.Duration
	// Shared is told whether the fleet counts in Redis (true) or alone
	// (false), at each change and at the start; nil for none.
	Shared func(bool)
	Log    *zap.Logger
}

// NewFleet returns a Fleet over redis, falling back to local.
func NewFleet(redis *Redis, local *Memory, cfg FleetConfig) *Fleet {
	if cfg.Share <= 0 || cfg.Share > 1 {
		cfg.Share = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 250 * time.Millisecond
	}
	if cfg.ProbeEvery <= 0 {
		cfg.ProbeEvery = 500 * time.Millisecond
	}
	if cfg.CheckEvery <= 0 {
		cfg.CheckEvery = 10 * time.Second
	}
	if cfg.Shared == nil {
		cfg.Shared = func(bool) {}
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	cfg.Shared(true)
	return &Fleet{redis: redis, local: local, cfg: cfg, failed: make(chan struct{}, 1)}
}

// Allow implements Engine.
func (f *Fleet) Allow(ctx context.Context, key string, r contract.Rate) (Result, error) {
	if !f.down.Load() {
		c, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
		res, err := f.redis.Allow(c, key, r)
		cancel()
		if err == nil {
			return res, nil
		}
		f.fail(ctx, err)
	}
	return f.local.Allow(ctx, key, Share(r, f.cfg.Share))
}

// Reserve implements Engine.
func (f *Fleet) Reserve(ctx context.Context, key string, quota, least, most int64) (Spent, error) {
	if !f.down.Load() {
		c, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
		res, err := f.redis.Reserve(c, key, quota, least, most)
		cancel()
		if err == nil {
			return res, nil
		}
		f.fail(ctx, err)
	}
	return f.local.Reserve(ctx, key, max(1, int64(float64(quota)*f.cfg.Share)), least, most)
}

// Release implements Engine: where s counted the bytes, Redis or memory.
// Bytes that Redis counted and does not take back (it went away since)
// stay counted there, until midnight.
func (f *Fleet) Release(ctx context.Context, key string, s Spent, n int64) error {
	if !s.inRedis {
		return f.local.Release(ctx, key, s, n)
	}
	if f.down.Load() {
		return nil
	}
	c, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	err := f.redis.Release(c, key, s, n)
	cancel()
	if err != nil {
		f.fail(ctx, err)
	}
	return nil
}

// fail turns to counting alone after Redis failed with err, unless the
// request itself ended (its client left).
func (f *Fleet) fail(ctx context.Context, err error) {
	if ctx.Err() != nil || !f.down.CompareAndSwap(false, true) {
		return
	}
	select {
	case f.failed <- struct{}{}:
	default:
	}
	f.cfg.Shared(false)
	f.cfg.Log.Error("redis does not answer: counting rate limits on this edge alone, at its share of each limit, until it does",
		zap.Float64("share", f.cfg.Share), zap.Error(err))
}

// Run pings Redis every CheckEvery while it answers, turning to counting
// alone when it does not, and every ProbeEvery while it does not,
// turning back to it at the first answer, until ctx is done.
func (f *Fleet) Run(ctx context.Context) {
	t := time.NewTimer(f.next())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.failed:
			t.Reset(f.next())
			continue
		case <-t.C:
		}
		c, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
		err := f.redis.Ping(c)
		cancel()
		switch {
		case err != nil:
			f.fail(ctx, err)
		case f.down.CompareAndSwap(true, false):
			f.cfg.Shared(true)
			f.cfg.Log.Info("redis answers again: counting rate limits for the whole fleet")
		}
		t.Reset(f.next())
	}
}

// next is how long Run waits before its next ping.
func (f *Fleet) next() time.Duration {
	if f.down.Load() {
		return f.cfg.ProbeEvery
	}
	return f.cfg.CheckEvery
}

// Shared reports whether the fleet counts in Redis now.
func (f *Fleet) Shared() bool { return !f.down.Load() }
