package caddymodule

import (
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
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
