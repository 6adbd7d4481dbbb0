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
// (scripts/redis.sh), as its ACL user, with the password of the file
// HDC_TEST_REDIS_PASSWORD_FILE names and the authority of
// HDC_TEST_REDIS_CA, or skips the test; HDC_REQUIRE_REDIS=1 fails it
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
	opt, err := RedisConfig{URL: url, PasswordFile: os.Getenv("HDC_TEST_REDIS_PASSWORD_FILE"), CAFile: os.Getenv("HDC_TEST_REDIS_CA")}.Options()
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
	// A token each 100 s: the loop cannot earn one back however slowly
	// a loaded machine runs it (at 10 a second, a loop of 100 ms got 6).
	rate := contract.Rate{PerSecond: 0.01, Burst: 5}
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
	if allowed != 5 || last.Allowed || last.RetryAfter <= 0 || last.RetryAfter > 100*time.Second {
		t.Fatalf("allowed %d of 8 (want 5), the last %+v", allowed, last)
	}
}

func TestRedisReserve(t *testing.T) {
	t.Parallel()
	r := NewRedis(testRedis(t))
	key := uniqueKey(t)
	for i, s := range []struct {
		least, most, granted, left int64
	}{{600, 600, 600, 400}, {500, 500, 0, 400}, {100, 1000, 400, 0}, {1, 1, 0, 0}} {
		got, err := r.Reserve(context.Background(), key, 1000, s.least, s.most)
		if err != nil || got.Allowed != (s.granted > 0) || got.Granted != s.granted || got.Remaining != s.left {
			t.Fatalf("step %d: %+v, %v", i, got, err)
		}
	}
}

// TestRedisRelease: what is given back is taken off the count, never below
// 0, and a count that expired is not made again. (The test runs as the
// edges' ACL user, which may run no more than an edge does.)
func TestRedisRelease(t *testing.T) {
	t.Parallel()
	client := testRedis(t)
	r := NewRedis(client)
	key := uniqueKey(t)
	s, err := r.Reserve(context.Background(), key, 1000, 600, 600)
	if err != nil || !s.Allowed {
		t.Fatalf("%+v, %v", s, err)
	}
	count := func() string { return client.Get(context.Background(), quotaKey(s.day, key)).Val() }
	for _, step := range []struct {
		release int64
		want    string
	}{{250, "350"}, {1000, "0"}} {
		if err := r.Release(context.Background(), key, s, step.release); err != nil || count() != step.want {
			t.Fatalf("after giving back %d: the count %q (%v), want %s", step.release, count(), err, step.want)
		}
	}
	gone := s
	gone.day = "2000-01-01" // a day whose count expired long ago
	if err := r.Release(context.Background(), key, gone, 100); err != nil || client.Get(context.Background(), quotaKey(gone.day, key)).Err() != redis.Nil {
		t.Fatalf("a release made an expired count again (%v)", err)
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
	if s, err := f.Reserve(context.Background(), "k", 1000, 600, 600); err != nil || s.Allowed {
		t.Fatalf("reserve 600 of a half share of 1000: %+v, %v", s, err)
	}
	s, err := f.Reserve(context.Background(), "k", 1000, 100, 500)
	if err != nil || s.Granted != 500 {
		t.Fatalf("reserve up to 500 of a half share of 1000: %+v, %v", s, err)
	}
	if err := f.Release(context.Background(), "k", s, 200); err != nil {
		t.Fatal(err)
	}
	if s, _ := f.Reserve(context.Background(), "k", 1000, 1, 1000); s.Granted != 200 {
		t.Fatalf("after 200 given back, %d granted of the share, want 200", s.Granted)
	}
}

// TestFleetIdleNoticesRedisGone: a Fleet that serves no request notices
// Redis going away by its periodic check, so that the gauge and its alert
// do not wait for traffic.
func TestFleetIdleNoticesRedisGone(t *testing.T) {
	t.Parallel()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	m, _ := newTestMemory(t)
	shared := make(chan bool, 4)
	f := NewFleet(NewRedis(dead), m, FleetConfig{CheckEvery: 20 * time.Millisecond, Shared: func(s bool) { shared <- s }})
	<-shared // true at the start
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	select {
	case s := <-shared:
		if s || f.Shared() {
			t.Fatal("shared still, with Redis gone")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an idle fleet did not notice within 5 s that Redis is gone")
	}
}

// TestFleetComesBack: a Fleet counting alone turns back to Redis at the
// first ping that answers, and says so: probed every ProbeEvery from the
// failure on, though Run was waiting for its next periodic check.
func TestFleetComesBack(t *testing.T) {
	t.Parallel()
	m, _ := newTestMemory(t)
	shared := make(chan bool, 4)
	f := NewFleet(NewRedis(testRedis(t)), m, FleetConfig{ProbeEvery: 20 * time.Millisecond, CheckEvery: time.Hour,
		Shared: func(s bool) { shared <- s }})
	<-shared // true at the start
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	f.fail(context.Background(), errors.New("a failure"))
	if <-shared || f.Shared() {
		t.Fatal("still shared after a failure")
	}
	select {
	case s := <-shared:
		if !s || !f.Shared() {
			t.Fatal("not shared again")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not back to Redis within 5 s of its answering")
	}
}
