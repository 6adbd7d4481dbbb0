package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// clock is a settable clock for Memory.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestMemory(t *testing.T) (*Memory, *clock) {
	t.Helper()
	m, err := NewMemory(100)
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	m.now = c.now
	return m, c
}

func TestMemoryAllow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rate    contract.Rate
		n       int           // requests at once
		wait    time.Duration // then this long
		allowed int           // of n+1 requests
	}{
		{"burst then refused", contract.Rate{PerSecond: 10, Burst: 5}, 6, 0, 5},
		{"refilled after a wait", contract.Rate{PerSecond: 10, Burst: 5}, 5, 100 * time.Millisecond, 6},
		{"unlimited", contract.Rate{}, 50, 0, 51},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, c := newTestMemory(t)
			got := 0
			for range tt.n {
				if r, _ := m.Allow(context.Background(), "k", tt.rate); r.Allowed {
					got++
				}
			}
			c.t = c.t.Add(tt.wait)
			if r, _ := m.Allow(context.Background(), "k", tt.rate); r.Allowed {
				got++
			} else if r.RetryAfter <= 0 || r.RetryAfter > time.Second/time.Duration(tt.rate.PerSecond) {
				t.Fatalf("refused with RetryAfter %v", r.RetryAfter)
			}
			if got != tt.allowed {
				t.Fatalf("allowed %d, want %d", got, tt.allowed)
			}
		})
	}
}

func TestMemoryRemaining(t *testing.T) {
	t.Parallel()
	m, _ := newTestMemory(t)
	r := contract.Rate{PerSecond: 100, Burst: 100}
	var res Result
	for range 58 {
		res, _ = m.Allow(context.Background(), "k", r)
	}
	if res.Remaining != 42 || res.ResetAfter != 580*time.Millisecond {
		t.Fatalf("remaining %d reset %v, want 42 and 580ms", res.Remaining, res.ResetAfter)
	}
}

func TestMemoryReserve(t *testing.T) {
	t.Parallel()
	m, c := newTestMemory(t)
	const quota = 10 << 20
	steps := []struct {
		least, most int64
		next        time.Duration // clock moved after
		granted     int64         // 0: refused
		left        int64
	}{
		{6 << 20, 6 << 20, 0, 6 << 20, 4 << 20},
		{5 << 20, 5 << 20, 0, 0, 4 << 20}, // would pass the quota: not counted
		{1 << 20, 8 << 20, 0, 4 << 20, 0}, // as much as is left
		{1, 1, 12 * time.Hour, 0, 0},      // nothing left
		{1, 64, 0, 64, quota - 64},        // the next day
	}
	for i, s := range steps {
		got, err := m.Reserve(context.Background(), "c", quota, s.least, s.most)
		if err != nil || got.Allowed != (s.granted > 0) || got.Granted != s.granted || got.Remaining != s.left || got.ResetAfter <= 0 {
			t.Fatalf("step %d: %+v, %v; want %d granted, %d left", i, got, err, s.granted, s.left)
		}
		c.t = c.t.Add(s.next)
	}
}

func TestMemoryRelease(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		release int64
		next    time.Duration // clock moved before the release
		left    int64         // today, after
	}{
		{"part of it", 300, 0, 700},
		{"more than the count", 5000, 0, 1000},
		{"on the day it was counted", 300, 13 * time.Hour, 1000}, // the new day's count is untouched
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, c := newTestMemory(t)
			s, err := m.Reserve(context.Background(), "c", 1000, 600, 600)
			if err != nil || !s.Allowed {
				t.Fatalf("%+v, %v", s, err)
			}
			c.t = c.t.Add(tt.next)
			if err := m.Release(context.Background(), "c", s, tt.release); err != nil {
				t.Fatal(err)
			}
			if got, _ := m.Reserve(context.Background(), "c", 1000, 1, 1); got.Remaining+1 != tt.left {
				t.Fatalf("%d left after the release, want %d", got.Remaining+1, tt.left)
			}
		})
	}
}

func TestShare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    contract.Rate
		share float64
		want  contract.Rate
	}{
		{contract.Rate{PerSecond: 100, Burst: 100}, 0.5, contract.Rate{PerSecond: 50, Burst: 50}},
		{contract.Rate{PerSecond: 1, Burst: 1}, 0.5, contract.Rate{PerSecond: 0.5, Burst: 1}},
		{contract.Rate{PerSecond: 9, Burst: 9}, 1, contract.Rate{PerSecond: 9, Burst: 9}},
	}
	for _, tt := range tests {
		if got := Share(tt.in, tt.share); got != tt.want {
			t.Errorf("Share(%v, %v) = %v, want %v", tt.in, tt.share, got, tt.want)
		}
	}
}
