package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

func testReplays(t *testing.T, s Store) {
	now := at(0)
	expires := now.Add(10 * time.Minute)
	for _, tt := range []struct {
		name     string
		kid, jti string
		now      time.Time
		want     error
	}{
		{"first", "k1", "jti-0001", now, nil},
		{"again", "k1", "jti-0001", now.Add(time.Minute), store.ErrConflict},
		{"another kid", "k2", "jti-0001", now, nil},
		{"another jti", "k1", "jti-0002", now, nil},
		{"expired, taken over", "k1", "jti-0001", expires, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.NoteRequest(ctx(t), tt.kid, tt.jti, tt.now.Add(10*time.Minute), tt.now); err != tt.want {
				t.Fatalf("NoteRequest = %v, want %v", err, tt.want)
			}
		})
	}
	// k1/jti-0001 now expires at expires+10m; the other two at expires.
	n, err := s.PruneRequests(ctx(t), expires)
	must(t, err)
	if n != 2 {
		t.Fatalf("PruneRequests forgot %d pairs, want 2", n)
	}
	if err := s.NoteRequest(ctx(t), "k2", "jti-0001", expires.Add(time.Hour), expires); err != nil {
		t.Fatalf("a pruned pair noted again: %v", err)
	}
	if err := s.NoteRequest(ctx(t), "k1", "jti-0001", expires.Add(time.Hour), expires); err != store.ErrConflict {
		t.Fatalf("a pair not yet expired: %v", err)
	}
}

// testReplaysConcurrent notes one pair from 20 goroutines at once: one
// succeeds.
func testReplaysConcurrent(t *testing.T, s Store) {
	var ok, conflicts atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			switch err := s.NoteRequest(ctx(t), "k1", "jti-concurrent", at(time.Minute), at(0)); err {
			case nil:
				ok.Add(1)
			case store.ErrConflict:
				conflicts.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || conflicts.Load() != 19 {
		t.Fatalf("%d notes succeeded and %d conflicted, want 1 and 19", ok.Load(), conflicts.Load())
	}
}
