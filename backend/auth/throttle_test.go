package auth

import (
	"strconv"
	"testing"
	"time"
)

func TestMemoryLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewMemoryLimiter(3, time.Minute, 100) // 3 per minute: one every 20 s
	l.now = func() time.Time { return now }

	for i := range 3 {
		if _, ok := l.Take("k"); !ok {
			t.Fatalf("attempt %d refused", i)
		}
	}
	wait, ok := l.Take("k")
	if ok || wait != 20*time.Second {
		t.Fatalf("fourth attempt: %v, %v; want refused for 20s", wait, ok)
	}
	if _, ok := l.Take("other"); !ok {
		t.Fatal("another key is throttled")
	}
	now = now.Add(10 * time.Second)
	if wait, ok := l.Take("k"); ok || wait != 10*time.Second {
		t.Fatalf("after 10s: %v, %v", wait, ok)
	}
	now = now.Add(10 * time.Second)
	if _, ok := l.Take("k"); !ok {
		t.Fatal("no attempt allowed after the refill time")
	}
	// A returned attempt (a success) frees its token at once.
	l.Return("k")
	if _, ok := l.Take("k"); !ok {
		t.Fatal("a returned attempt still counts")
	}
	// Returns never exceed the burst.
	now = now.Add(time.Hour)
	for range 5 {
		l.Return("k")
	}
	for i := range 3 {
		if _, ok := l.Take("k"); !ok {
			t.Fatalf("attempt %d refused after a full refill", i)
		}
	}
	if _, ok := l.Take("k"); ok {
		t.Fatal("returns raised the burst")
	}
}

func TestMemoryLimiterBoundsKeys(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewMemoryLimiter(2, time.Minute, 10)
	l.now = func() time.Time { return now }
	l.Take("victim")
	l.Take("victim")
	for i := range 1000 {
		l.Take("spray-" + strconv.Itoa(i))
	}
	if n := len(l.buckets); n > 10 {
		t.Fatalf("%d keys remembered, want at most 10", n)
	}
}
