package testkit

import (
	"sync/atomic"
	"testing"
	"time"
)

// pollInterval is how often WaitFor checks its condition.
const pollInterval = 10 * time.Millisecond

// WaitFor checks cond until it holds or within has passed, and reports
// whether it held.
func WaitFor(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval)
	}
}

// Eventually fails t unless cond holds within that long; what names the
// condition in the failure. The bound is on a hang, not a timing assertion.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !WaitFor(within, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Grows waits until counter has grown by n from its value now, failing t
// after a minute: a phase of load measured in requests, not in time.
func Grows(t testing.TB, counter *atomic.Int64, n int64, what string) {
	t.Helper()
	target := counter.Load() + n
	Eventually(t, time.Minute, what, func() bool { return counter.Load() >= target })
}
