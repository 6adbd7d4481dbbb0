package caddymodule

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// TestAppStopWaitsForThePoller: when Stop returns, the registry poller that
// Start started has returned too, so a config being unloaded leaves no
// goroutine of its own behind.
func TestAppStopWaitsForThePoller(t *testing.T) {
	a := newTestApp(t, nil)
	a.Keys.PollInterval = caddy.Duration(time.Millisecond)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // let it poll a few times
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.polled:
	default:
		t.Fatal("Stop returned before the poller did")
	}
}

// TestNewKeyFoundByConcurrentRequests: a key added to the registry a moment
// ago is found by every request that names it, however many arrive at once
// and whether or not the poller read the file first: one request reloads,
// the others wait for that reload rather than fail.
func TestNewKeyFoundByConcurrentRequests(t *testing.T) {
	for _, polledFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("polled first %v", polledFirst), func(t *testing.T) {
			for round := range 20 {
				a := newTestApp(t, testKeys)
				kid := fmt.Sprintf("k-new-%d", round)
				if err := registryfile.Update(a.Keys.Registry, testSealer, func(f *registryfile.File) error {
					_, err := f.Add("c1", kid, "", time.Now())
					return err
				}); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				if polledFirst {
					// The poller may read the file between a request's
					// lookup and its reload.
					wg.Go(func() { _, _, _ = a.keys.source.reload() })
				}
				var missed atomic.Int32
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := a.lookupKey(t.Context(), kid, "192.0.2.1"); err != nil {
							missed.Add(1)
						}
					}()
				}
				wg.Wait()
				if n := missed.Load(); n != 0 {
					t.Fatalf("round %d: %d of 8 requests did not find the new key", round, n)
				}
			}
		})
	}
}
