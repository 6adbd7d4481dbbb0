package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// rewrapOut is what hdc keeper rewrap prints.
type rewrapOut struct {
	DataKey  string `json:"data_key"`
	Store    string `json:"store"`
	Registry string `json:"registry"`
}

// TestKeeperRewrapWhileServing moves a running stack's secrets from its
// local key to a KMS key (local-kms, through the awskms driver), then to
// another KMS key, with hdc keeper rewrap while clients keep calling: no
// request fails, the running edge and backend go on, a backend started
// afterwards with the new keeper serves, the old keeper no longer opens
// anything, an interrupted rewrap finishes when run again, and the
// installation's audit trail records each rewrap.
func TestKeeperRewrapWhileServing(t *testing.T) {
	k := startKMS(t)
	s := startFileStack(t) // the registry file's data key is rewrapped too
	s.env = append(s.env, k.env()...)
	local := s.keeper
	c := s.newClient("rewrap")

	var calls, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			tk := s.login(c, true, "")
			if r := s.send(c, true, "GET", subsPath, nil, bearer(tk)); r.status != 200 {
				failed.Add(1)
			}
			calls.Add(1)
		}
	})

	// Interrupted: the store's data key is rewrapped, the registry (a
	// directory here) is not; run again, the store is left and the
	// registry done.
	_, _, err := s.hdcRun("keeper", "rewrap", "--to", k.url(0), "--registry", t.TempDir())
	if err == nil {
		t.Fatal("a rewrap with a registry that is no file succeeded")
	}
	var out rewrapOut
	s.hdc(&out, "keeper", "rewrap", "--to", k.url(0))
	s.env, s.keeper = append(s.env, "HDC_KEEPER="+k.url(0)), k.url(0)
	if out.Store != "already" || out.Registry != "rewrapped" {
		t.Fatalf("the rewrap run again: %+v, want the store already done and the registry rewrapped", out)
	}
	s.hdc(&out, "keeper", "rewrap", "--to", k.url(1))
	if out.Store != "rewrapped" || out.Registry != "rewrapped" {
		t.Fatalf("the second rewrap: %+v", out)
	}
	s.keeper = k.url(1)
	time.Sleep(3 * time.Second) // the edge's next poll reads the rewrapped registry
	close(stop)
	wg.Wait()
	if calls.Load() == 0 || failed.Load() != 0 {
		t.Fatalf("%d of %d calls failed during the rewraps", failed.Load(), calls.Load())
	}
	t.Logf("%d calls while rewrapping, none failed", calls.Load())

	// The local key opens nothing any more; the first KMS key can go (a
	// KMS decrypts with the key a ciphertext names, whoever asks): with it
	// disabled, the new keeper opens everything.
	if _, _, err := s.hdcRun("audit", "verify", "--keeper", local); err == nil || !strings.Contains(err.Error(), "cannot unwrap") {
		t.Fatalf("hdc audit verify with the local key rewrapped away from: %v", err)
	}
	k.disable(t, 0)
	s.env = append(s.env, "HDC_KEEPER="+k.url(1))
	s.verifyAudit(t, nil, nil)
	var rotated struct{ Kid, Secret string }
	s.hdc(&rotated, "keys", "rotate", "--client", c.ID)
	b := startWebhookBackend(t, filepath.Join(s.dir, "backend"), append(k.env(), "HDC_KEEPER="+k.url(1))...)
	b.stop()

	// Four data keys rewrapped: the store's (first run), the registry's
	// (second), both (third).
	var rewraps []string
	for _, r := range s.listAudit("") {
		var line struct{ Entity struct{ Kind, ID string } }
		if err := json.Unmarshal([]byte(r.line), &line); err != nil {
			t.Fatal(err)
		}
		if r.Action == audit.KeeperRewrap && line.Entity.Kind == string(audit.EntityDataKey) {
			rewraps = append(rewraps, line.Entity.ID)
		}
	}
	if len(rewraps) != 4 || rewraps[0] != out.DataKey || rewraps[2] != out.DataKey || rewraps[1] != rewraps[3] || rewraps[1] == out.DataKey {
		t.Fatalf("the installation's trail records the rewraps of %v; want the store's %s, the registry's, then both", rewraps, out.DataKey)
	}
}
