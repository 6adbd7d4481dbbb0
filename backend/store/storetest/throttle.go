package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// threePerThreeMinutes refills one attempt a minute.
var threePerThreeMinutes = store.Rate{Burst: 3, Per: 3 * time.Minute}

func take(t *testing.T, s Store, key string, now time.Time) (time.Duration, bool) {
	t.Helper()
	wait, ok, err := s.TakeThrottle(ctx(t), key, threePerThreeMinutes, now)
	must(t, err)
	return wait, ok
}

func testThrottle(t *testing.T, s Store) {
	for i := range 3 {
		if _, ok := take(t, s, "k", at(0)); !ok {
			t.Fatalf("attempt %d of a burst of 3 refused", i+1)
		}
	}
	if wait, ok := take(t, s, "k", at(0)); ok || wait != time.Minute {
		t.Fatalf("fourth attempt: wait %v, ok %v; want refused for 1m", wait, ok)
	}
	if _, ok := take(t, s, "other", at(0)); !ok {
		t.Fatal("another key is throttled")
	}
	if wait, ok := take(t, s, "k", at(30*time.Second)); ok || wait != 30*time.Second {
		t.Fatalf("after 30s: wait %v, ok %v; want refused for 30s", wait, ok)
	}
	if _, ok := take(t, s, "k", at(time.Minute)); !ok {
		t.Fatal("no attempt allowed after the refill time")
	}
	if _, ok := take(t, s, "k", at(time.Minute)); ok {
		t.Fatal("a refill of one attempt allowed two")
	}
	// A returned attempt (a success) is available at once.
	must(t, s.ReturnThrottle(ctx(t), "k", threePerThreeMinutes, at(time.Minute)))
	if _, ok := take(t, s, "k", at(time.Minute)); !ok {
		t.Fatal("a returned attempt still counts")
	}
	// Returns never raise the bucket above its burst; neither does
	// returning to a key never seen.
	later := at(time.Hour)
	for range 5 {
		must(t, s.ReturnThrottle(ctx(t), "k", threePerThreeMinutes, later))
		must(t, s.ReturnThrottle(ctx(t), "new", threePerThreeMinutes, later))
	}
	for _, key := range []string{"k", "new"} {
		for i := range 3 {
			if _, ok := take(t, s, key, later); !ok {
				t.Fatalf("%s: attempt %d refused after a full refill", key, i+1)
			}
		}
		if _, ok := take(t, s, key, later); ok {
			t.Fatalf("%s: returns raised the burst", key)
		}
	}

	// Pruning forgets full buckets only.
	n, err := s.PruneThrottle(ctx(t), later)
	must(t, err)
	if n != 1 {
		t.Fatalf("pruned %d keys, want 1 (other)", n)
	}
	if _, ok := take(t, s, "k", later); ok {
		t.Fatal("pruning emptied a bucket that was not full")
	}
}

func testThrottleConcurrentTakes(t *testing.T, s Store) {
	const callers = 12
	var (
		ok atomic.Int64
		wg sync.WaitGroup
	)
	for range callers {
		wg.Go(func() {
			_, allowed, err := s.TakeThrottle(ctx(t), "k", threePerThreeMinutes, at(0))
			if err != nil {
				t.Error(err)
			}
			if allowed {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 3 {
		t.Fatalf("%d of %d concurrent attempts allowed, want the burst of 3", ok.Load(), callers)
	}
}
