package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/tests/hdctest"
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
	t.Parallel()
	k := hdctest.StartKMS(t)
	s := hdctest.StartFileStack(t) // the registry file's data key is rewrapped too
	s.Env = append(s.Env, k.Env()...)
	local := s.Keeper
	c := s.NewClient("rewrap")

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
			tk := s.Login(c, true, "")
			if r := s.Send(c, true, "GET", hdctest.SubsPath, nil, hdctest.Bearer(tk)); r.Status != 200 {
				failed.Add(1)
			}
			calls.Add(1)
		}
	})

	// Interrupted: the store's data key is rewrapped, the registry (a
	// directory here) is not; run again, the store is left and the
	// registry done.
	_, _, err := s.HDCRun("keeper", "rewrap", "--to", k.URL(0), "--registry", t.TempDir())
	if err == nil {
		t.Fatal("a rewrap with a registry that is no file succeeded")
	}
	var out rewrapOut
	s.HDC(&out, "keeper", "rewrap", "--to", k.URL(0))
	s.Env, s.Keeper = append(s.Env, "HDC_KEEPER="+k.URL(0)), k.URL(0)
	if out.Store != "already" || out.Registry != "rewrapped" {
		t.Fatalf("the rewrap run again: %+v, want the store already done and the registry rewrapped", out)
	}
	s.RegistryChanged(func() { s.HDC(&out, "keeper", "rewrap", "--to", k.URL(1)) }) // calls go on meanwhile
	if out.Store != "rewrapped" || out.Registry != "rewrapped" {
		t.Fatalf("the second rewrap: %+v", out)
	}
	s.Keeper = k.URL(1)
	close(stop)
	wg.Wait()
	if calls.Load() == 0 || failed.Load() != 0 {
		t.Fatalf("%d of %d calls failed during the rewraps", failed.Load(), calls.Load())
	}
	t.Logf("%d calls while rewrapping, none failed", calls.Load())

	// The local key opens nothing any more; the first KMS key can go (a
	// KMS decrypts with the key a ciphertext names, whoever asks): with it
	// disabled, the new keeper opens everything.
	if _, _, err := s.HDCRun("audit", "verify", "--keeper", local); err == nil || !strings.Contains(err.Error(), "cannot unwrap") {
		t.Fatalf("hdc audit verify with the local key rewrapped away from: %v", err)
	}
	k.Disable(t, 0)
	s.Env = append(s.Env, "HDC_KEEPER="+k.URL(1))
	s.VerifyAudit(t, nil, nil)
	var rotated struct{ Kid, Secret string }
	s.HDC(&rotated, "keys", "rotate", "--client", c.ID)
	b := hdctest.StartWebhookBackend(t, filepath.Join(s.Dir, "backend"), append(k.Env(), "HDC_KEEPER="+k.URL(1))...)
	b.Stop()

	// Four data keys rewrapped: the store's (first run), the registry's
	// (second), both (third).
	var rewraps []string
	for _, r := range s.ListAudit("") {
		var line struct{ Entity struct{ Kind, ID string } }
		if err := json.Unmarshal([]byte(r.Line), &line); err != nil {
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
