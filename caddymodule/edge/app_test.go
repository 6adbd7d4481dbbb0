package edge

import (
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
)

// newTestApp returns an app provisioned over a registry file of keys,
// polled every interval.
func newTestApp(t testing.TB, interval time.Duration) *App {
	t.Helper()
	a := &App{Keys: KeysConfig{Registry: edgetest.Registry(t, edgetest.Keys), Keeper: edgetest.KeeperURL,
		PollInterval: caddy.Duration(interval)}}
	edgetest.Provision(t, a)
	return a
}

// TestAppStopWaitsForThePoller: when Stop returns, the registry poller that
// Start started has returned too, so a config being unloaded leaves no
// goroutine of its own behind.
func TestAppStopWaitsForThePoller(t *testing.T) {
	a := newTestApp(t, time.Millisecond)
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
