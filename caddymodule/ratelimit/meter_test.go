package ratelimit

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// countingEngine counts the calls of Reserve and Release to the engine it
// wraps, and fails them while failing is set.
type countingEngine struct {
	Engine
	reserves, releases atomic.Int64
	failing            atomic.Bool
}

func (e *countingEngine) Reserve(ctx context.Context, key string, quota, least, most int64) (Spent, error) {
	e.reserves.Add(1)
	if e.failing.Load() {
		return Spent{}, errors.New("no answer")
	}
	return e.Engine.Reserve(ctx, key, quota, least, most)
}

func (e *countingEngine) Release(ctx context.Context, key string, s Spent, n int64) error {
	e.releases.Add(1)
	return e.Engine.Release(ctx, key, s, n)
}

// TestMeter: a stream read in small reads is counted exactly, the engine
// asked once a chunk, and refused at the read that would pass the quota.
func TestMeter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		quota    int64
		before   int64 // counted today before the stream
		stream   int64 // bytes, read 4 KiB at a time
		passed   bool
		counted  int64 // let through
		reserves int64 // calls of Reserve, at most
	}{
		{"small", 10 << 20, 0, 1000, false, 1000, 1},
		{"a MiB", 10 << 20, 0, 1 << 20, false, 1 << 20, 6},
		{"64 MiB", 1 << 30, 0, 64 << 20, false, 64 << 20, 70},
		{"to the byte", 1 << 20, 1<<20 - 300<<10, 300 << 10, false, 300 << 10, 4},
		{"past the quota", 1 << 20, 1<<20 - 300<<10, 400 << 10, true, 300 << 10, 5},
		{"nothing left", 1 << 20, 1 << 20, 4096, true, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, _ := newTestMemory(t)
			ctx := context.Background()
			if tt.before > 0 {
				if s, _ := m.Reserve(ctx, "c", tt.quota, tt.before, tt.before); !s.Allowed {
					t.Fatal("the day's count could not be set")
				}
			}
			e := &countingEngine{Engine: m}
			meter := NewMeter(e, "c", tt.quota)
			start, err := meter.Start(ctx)
			if err != nil || start.Allowed != (tt.before < tt.quota) || start.Remaining+start.Granted != tt.quota-tt.before {
				t.Fatalf("start: %+v, %v; want %d left", start, err, tt.quota-tt.before)
			}
			for read := int64(0); read < tt.stream; read += 4096 {
				if ok, err := meter.Add(ctx, min(4096, tt.stream-read)); err != nil || !ok {
					break
				}
			}
			end, err := meter.Close(ctx)
			if err != nil || meter.Passed() != tt.passed || meter.Counted() != tt.counted {
				t.Fatalf("passed %v, counted %d (%v); want %v, %d", meter.Passed(), meter.Counted(), err, tt.passed, tt.counted)
			}
			if n := e.reserves.Load(); n > tt.reserves {
				t.Fatalf("%d calls of Reserve, want at most %d", n, tt.reserves)
			}
			// The engine's count is the bytes let through, and the state
			// Close returned says what it leaves.
			left := tt.quota - tt.before - tt.counted
			if now, _ := m.Reserve(ctx, "c", tt.quota, tt.quota+1, tt.quota+1); now.Remaining != left || end.Remaining != left {
				t.Fatalf("%d left in the engine, %d said by Close; want %d", now.Remaining, end.Remaining, left)
			}
			if ok, _ := meter.Add(ctx, 1); ok {
				t.Fatal("a closed meter let a byte through")
			}
		})
	}
}

// TestMeterEngineFails: while the engine fails, the bytes go through
// uncounted, and what the meter held before is still given back.
func TestMeterEngineFails(t *testing.T) {
	t.Parallel()
	m, _ := newTestMemory(t)
	ctx := context.Background()
	e := &countingEngine{Engine: m}
	meter := NewMeter(e, "c", 1<<20)
	if _, err := meter.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := meter.Add(ctx, 1000); !ok || err != nil {
		t.Fatalf("%v, %v", ok, err)
	}
	e.failing.Store(true)
	if ok, err := meter.Add(ctx, 100<<10); !ok || err == nil {
		t.Fatalf("a read past what the meter held, with the engine failing: %v, %v; want let through, and the error", ok, err)
	}
	e.failing.Store(false)
	if _, err := meter.Close(ctx); err != nil || e.releases.Load() != 0 {
		t.Fatalf("close: %v, %d releases; want none (the meter used what it held)", err, e.releases.Load())
	}
	if now, _ := m.Reserve(ctx, "c", 1<<20, 1<<21, 1<<21); now.Remaining != 1<<20-64<<10 {
		t.Fatalf("%d left, want the first chunk counted (%d)", now.Remaining, 1<<20-64<<10)
	}
}
