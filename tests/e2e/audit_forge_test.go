package e2e

import (
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestRetentionCannotBeSteeredByAWriter (third review, findings 2 and 3):
// a writer of the database sets the recorded_at column of a workspace's
// first records to 1970, and edits the search columns of another; a
// backend started on the database removes nothing (what has expired is
// decided from the records' own times, under the chain's MAC), and `hdc
// audit verify` fails, naming the first row whose columns are not its
// record's.
func TestRetentionCannotBeSteeredByAWriter(t *testing.T) {
	t.Parallel()
	const ws = "audit-forge"
	dir := t.TempDir()
	ops := &hdctest.Stack{T: t, Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HDC_DATA=" + dir}}
	for range 4 {
		hdctest.CreateWebhookClient(t, dir, ws)
	}
	if n := len(ops.ListAudit(ws)); n != 4 {
		t.Fatalf("the trail holds %d records, want 4", n)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE audit_records SET recorded_at = 0 WHERE workspace_id = 'audit-forge' AND seq <= 3`,
		`UPDATE audit_records SET client_id = 'someone-else' WHERE workspace_id = 'audit-forge' AND seq = 4`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	// The default retention, six years: the forged rows look 56 years old.
	b := hdctest.StartWebhookBackend(t, dir)
	ops.WaitFor("the retention job to run", func() bool {
		return hdctest.ScrapeMetric(http.DefaultClient, b.Internal+contract.PathMetrics, `hdc_backend_audit_retention_runs_total{result="ok"}`) >= 1
	})
	b.Stop()
	if db, err = sql.Open("sqlite", filepath.Join(dir, "hdc.db")); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, first int64
	if err := db.QueryRow(`SELECT count(*), min(seq) FROM audit_records WHERE workspace_id = ?`, ws).Scan(&n, &first); err != nil {
		t.Fatal(err)
	}
	if n != 4 || first != 1 {
		t.Fatalf("after the backend ran, the trail holds %d records from record %d; want the 4 written", n, first)
	}
	ops.VerifyAudit(t, nil, &audit.Break{Workspace: ws, Seq: 1, Reason: "stored record: its row's columns are not the record's (workspace_id, recorded_at, client_id, entity_id or person was altered)"})
}
