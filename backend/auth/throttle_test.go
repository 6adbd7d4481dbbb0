package auth

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// clockedLimiter is a Limiter under test with the clock it reads.
type clockedLimiter struct {
	Limiter
	clock *testkit.Clock
}

// limiters returns each implementation allowing 3 attempts a minute.
func limiters(t *testing.T) map[string]clockedLimiter {
	memClock, storeClock := testkit.NewClock(time.Unix(1000, 0)), testkit.NewClock(time.Unix(1000, 0))
	mem := NewMemoryLimiter(3, time.Minute, 100)
	mem.now = memClock.Now

	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db := NewStoreLimiter(st, 3, time.Minute, zap.NewNop())
	db.now = storeClock.Now
	return map[string]clockedLimiter{"memory": {mem, memClock}, "store": {db, storeClock}}
}

func TestLimiters(t *testing.T) {
	for name, l := range limiters(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			take := func(key string) (time.Duration, bool) {
				t.Helper()
				wait, ok, err := l.Take(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				return wait, ok
			}
			giveBack := func(key string) {
				t.Helper()
				if err := l.Return(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 3 {
				if _, ok := take("k"); !ok {
					t.Fatalf("attempt %d refused", i)
				}
			}
			if wait, ok := take("k"); ok || wait != 20*time.Second {
				t.Fatalf("fourth attempt: %v, %v; want refused for 20s", wait, ok)
			}
			if _, ok := take("other"); !ok {
				t.Fatal("another key is throttled")
			}
			l.clock.Advance(10 * time.Second)
			if wait, ok := take("k"); ok || wait != 10*time.Second {
				t.Fatalf("after 10s: %v, %v", wait, ok)
			}
			l.clock.Advance(10 * time.Second)
			if _, ok := take("k"); !ok {
				t.Fatal("no attempt allowed after the refill time")
			}
			// A returned attempt (a success) frees its token at once.
			giveBack("k")
			if _, ok := take("k"); !ok {
				t.Fatal("a returned attempt still counts")
			}
			// Returns never exceed the burst.
			l.clock.Advance(time.Hour)
			for range 5 {
				giveBack("k")
			}
			for i := range 3 {
				if _, ok := take("k"); !ok {
					t.Fatalf("attempt %d refused after a full refill", i)
				}
			}
			if _, ok := take("k"); ok {
				t.Fatal("returns raised the burst")
			}
		})
	}
}

// TestMemoryLimiterKeepsLockouts sprays made-up keys at a full limiter: its
// memory stays bounded, and a locked-out key stays locked out.
func TestMemoryLimiterKeepsLockouts(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewMemoryLimiter(2, time.Minute, 10)
	l.now = func() time.Time { return now }
	ctx := context.Background()
	for range 2 {
		l.Take(ctx, "victim")
	}
	for i := range 1000 {
		l.Take(ctx, "spray-"+strconv.Itoa(i))
		if i%100 == 0 {
			now = now.Add(time.Second) // sweeps happen, but find nothing full
		}
	}
	if n := len(l.buckets); n > 10 {
		t.Fatalf("%d keys remembered, want at most 10", n)
	}
	if _, ok, _ := l.Take(ctx, "victim"); ok {
		t.Fatal("a flood of made-up keys lifted a lockout")
	}
	// The keys that found no room shared one bucket, long since empty.
	if _, ok, _ := l.Take(ctx, "newcomer"); ok {
		t.Fatal("the overflow bucket let an attempt through")
	}
	// Once buckets are full again they make room.
	now = now.Add(time.Hour)
	if _, ok, _ := l.Take(ctx, "newcomer"); !ok {
		t.Fatal("no room made for a new key after every bucket refilled")
	}
	if _, ok := l.buckets["newcomer"]; !ok {
		t.Fatal("the new key did not get a bucket of its own")
	}
}

// TestStoreLimiterPrunes checks that the store limiter forgets full
// buckets once per window, and only full ones.
func TestStoreLimiterPrunes(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Unix(1000, 0)
	l := NewStoreLimiter(st, 3, time.Minute, zap.NewNop())
	l.now = func() time.Time { return now }
	ctx := t.Context()
	l.Take(ctx, "old")
	now = now.Add(2 * time.Minute)
	for range 3 {
		l.Take(ctx, "locked")
	}
	// The first take pruned nothing; this one, a window later, forgets
	// "old" (full again) and keeps "locked".
	now = now.Add(time.Second)
	if _, ok, _ := l.Take(ctx, "locked"); ok {
		t.Fatal("locked key allowed")
	}
	n, err := st.PruneThrottle(ctx, now)
	if err != nil || n != 0 {
		t.Fatalf("after the limiter's prune %d full keys were left (%v), want 0", n, err)
	}
	if _, ok, err := st.TakeThrottle(ctx, "locked", store.Rate{Burst: 3, Per: time.Minute}, now); ok || err != nil {
		t.Fatalf("the prune forgot a locked key (%v)", err)
	}
}
