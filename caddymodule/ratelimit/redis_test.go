package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/health-data-connect/hdc/internal/contract"
)

// testRedis returns a client of the Redis HDC_TEST_REDIS_URL names
// (scripts/redis.sh), or skips the test; HDC_REQUIRE_REDIS=1 fails it
// instead, as in CI.
func testRedis(t *testing.T) *redis.Client {
	t.Helper()
	url := os.Getenv("HDC_TEST_REDIS_URL")
	if url == "" {
		if os.Getenv("HDC_REQUIRE_REDIS") == "1" {
			t.Fatal("HDC_REQUIRE_REDIS=1 but HDC_TEST_REDIS_URL is not set (scripts/redis.sh start DIR)")
		}
		t.Skip("HDC_TEST_REDIS_URL is not set (scripts/redis.sh start DIR)")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// uniqueKey names a key no other run used.
func uniqueKey(t *testing.T) string { return fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()) }

func TestRedisAllow(t *testing.T) {
	t.Parallel()
	r := NewRedis(testRedis(t))
	key := uniqueKey(t)
	rate := contract.Rate{PerSecond: 10, Burst: 5}
	allowed := 0
	var last Result
	for range 8 {
		res, err := r.Allow(context.Background(), key, rate)
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed {
			allowed++
		}
		last = res
	}
	if allowed != 5 || last.Allowed || last.RetryAfter <= 0 || last.RetryAfter > 100*time.Millisecond {
		t.Fatalf("allowed %d of 8 (want 5), the last %+v", allowed, last)
	}
}

func TestRedisSpend(t *testing.T) {
	t.Parallel()
	r := NewRedis(testRedis(t))
	key := uniqueKey(t)
	for i, s := range []struct {
		n       int64
		allowed bool
		left    int64
	}{{600, true, 400}, {500, false, 400}, {400, true, 0}} {
		got, err := r.Spend(context.Background(), key, 1000, s.n)
		if err != nil || got.Allowed != s.allowed || got.Remaining != s.left {
			t.Fatalf("step %d: %+v, %v", i, got, err)
		}
	}
}

// TestFleetFallsBack: a Fleet whose Redis does not answer counts alone at
// its share, at once, and says so; never an error.
func TestFleetFallsBack(t *testing.T) {
	t.Parallel()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	m, _ := newTestMemory(t)
	var shared []bool
	f := NewFleet(NewRedis(dead), m, FleetConfig{Share: 0.5, Shared: func(s bool) { shared = append(shared, s) }})
	allowed := 0
	for range 20 {
		res, err := f.Allow(context.Background(), "k", contract.Rate{PerSecond: 10, Burst: 10})
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed {
			allowed++
		}
	}
	if allowed != 5 || f.Shared() || len(shared) != 2 || shared[1] {
		t.Fatalf("allowed %d (want 5, half the burst), shared %v", allowed, shared)
	}
	if s, err := f.Spend(context.Background(), "k", 1000, 600); err != nil || s.Allowed {
		t.Fatalf("spend 600 of a half share of 1000: %+v, %v", s, err)
	}
}

// TestFleetComesBack: a Fleet counting alone turns back to Redis at the
// first ping that answers, and says so.
func TestFleetComesBack(t *testing.T) {
	t.Parallel()
	m, _ := newTestMemory(t)
	shared := make(chan bool, 4)
	f := NewFleet(NewRedis(testRedis(t)), m, FleetConfig{ProbeEvery: 20 * time.Millisecond, Shared: func(s bool) { shared <- s }})
	<-shared // true at the start
	f.fail(context.Background(), errors.New("a failure"))
	if <-shared || f.Shared() {
		t.Fatal("still shared after a failure")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	select {
	case s := <-shared:
		if !s || !f.Shared() {
			t.Fatal("not shared again")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not back to Redis within 5 s of its answering")
	}
}
