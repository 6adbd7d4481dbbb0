package e2e

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestAuditVerifyReadsTheDataDirsCheckpoints (third review, finding 7): hdc
// up writes the trails' checkpoints to <data>/audit-checkpoints, and
// `hdc audit verify --data <data>` verifies against them without being
// told to: a whole trail deleted from the database is caught, and verify
// says which checkpoint it verified against. With no checkpoints there,
// it passes saying what that cannot show.
func TestAuditVerifyReadsTheDataDirsCheckpoints(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	cmd, _ := startUp(t, hdc, dir, env, []string{"up", "--listen", testkit.FreeAddr(t), "--metrics", testkit.FreeAddr(t), "--admin", "off",
		"--backend-listen", testkit.FreeAddr(t), "--internal-listen", testkit.FreeAddr(t)}, os.Stderr)
	stopUp(t, cmd) // the backend writes a checkpoint as it stops
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(filepath.Join(data, "audit-checkpoints")); err != nil {
		t.Fatalf("hdc up wrote no checkpoints: %v", err)
	}
	verify := func(data string) (string, error) {
		c := exec.Command(hdc, "audit", "verify", "--data", data)
		c.Env = env
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := verify(data); err != nil || !strings.Contains(out, "against the checkpoint") {
		t.Fatalf("hdc audit verify on the untouched data: %v\n%s", err, out)
	}

	// The demo workspace's whole trail deleted, its head too.
	tampered := filepath.Join(t.TempDir(), "data")
	hdctest.CopyPrivate(t, data, tampered)
	db, err := sql.Open("sqlite", filepath.Join(tampered, "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM audit_records WHERE workspace_id = 'demo'`, `DELETE FROM audit_heads WHERE workspace_id = 'demo'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if out, err := verify(tampered); err == nil || !strings.Contains(out, `the audit trail of workspace "demo" breaks at record 1: the trail is missing`) {
		t.Fatalf("hdc audit verify --data with the demo trail deleted: %v\n%s", err, out)
	}

	// Without checkpoints, the same deletion passes, and verify says what
	// it could not check.
	if err := os.RemoveAll(filepath.Join(tampered, "audit-checkpoints")); err != nil {
		t.Fatal(err)
	}
	if out, err := verify(tampered); err != nil || !strings.Contains(out, "a whole trail deleted") {
		t.Fatalf("hdc audit verify --data without checkpoints: %v\n%s", err, out)
	}
}

// stopUp stops hdc up with Ctrl-C and waits until it has exited cleanly.
func stopUp(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("hdc up exited with %v after Ctrl-C", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("hdc up did not stop after Ctrl-C")
	}
}
