package kidregistry

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// openTestFile returns the keys of a new registry file holding one key of
// client c1, and the file's path and sealer.
func openTestFile(t *testing.T) (*Keys, string, *registryfile.Sealer) {
	t.Helper()
	url := testkit.KeeperURL()
	k, err := keeper.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	sealer, path := registryfile.NewSealer(k), filepath.Join(t.TempDir(), "keys.json")
	if err := registryfile.Update(path, sealer, func(f *registryfile.File) error {
		_, err := f.Add("c1", "k-c1", "", "", false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	keys, err := OpenFile(t.Context(), FileConfig{Path: path, KeeperURL: url, Every: time.Hour, Log: zap.NewNop(), Observe: func(Load) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keys.Close() })
	return keys, path, sealer
}

// TestNewKeyFoundByConcurrentRequests: a key added to the registry a moment
// ago is found by every request that names it, however many arrive at once
// and whether or not the poller read the file first: one request reloads,
// the others wait for that reload rather than fail.
func TestNewKeyFoundByConcurrentRequests(t *testing.T) {
	for _, polledFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("polled first %v", polledFirst), func(t *testing.T) {
			for round := range 20 {
				keys, path, sealer := openTestFile(t)
				kid := fmt.Sprintf("k-new-%d", round)
				if err := registryfile.Update(path, sealer, func(f *registryfile.File) error {
					_, err := f.Add("c1", kid, "", "", false, time.Now())
					return err
				}); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				if polledFirst {
					// The poller may read the file between a request's
					// lookup and its reload.
					wg.Go(func() { _, _, _ = keys.Reload() })
				}
				var missed atomic.Int32
				for range 8 {
					wg.Go(func() {
						if _, err := keys.Usable(t.Context(), kid, "192.0.2.1", "c1", false); err != nil {
							missed.Add(1)
						}
					})
				}
				wg.Wait()
				if n := missed.Load(); n != 0 {
					t.Fatalf("round %d: %d of 8 requests did not find the new key", round, n)
				}
			}
		})
	}
}
