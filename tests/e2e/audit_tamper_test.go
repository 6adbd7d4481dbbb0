package e2e

import (
	"database/sql"
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// storedTrail is a workspace's trail as a writer of the database sees it:
// the rows, in seq order, each record parsed.
type storedTrail struct {
	db        *sql.DB
	workspace string
	records   []audit.Record
}

// readTrail reads the trail of ws from db.
func readTrail(t *testing.T, db *sql.DB, ws string) *storedTrail {
	t.Helper()
	rows, err := db.Query(`SELECT body FROM audit_records WHERE workspace_id = ? ORDER BY seq`, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	tr := &storedTrail{db: db, workspace: ws}
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			t.Fatal(err)
		}
		r, err := audit.Parse(body)
		if err != nil {
			t.Fatal(err)
		}
		tr.records = append(tr.records, r)
	}
	if len(tr.records) < 4 {
		t.Fatalf("the trail of %s has %d records; the cases need 4", ws, len(tr.records))
	}
	return tr
}

// rewrite stores the records from index from on, relinked as a writer of
// the database can: each one's prev the SHA-256 of the one before (the
// first keeps its prev), and moves the head to the last.
func (tr *storedTrail) rewrite(t *testing.T, from int) {
	t.Helper()
	exec := func(q string, args ...any) {
		if _, err := tr.db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`DELETE FROM audit_records WHERE workspace_id = ? AND seq >= ?`, tr.workspace, tr.records[from].Seq)
	for i := from; i < len(tr.records); i++ {
		r := &tr.records[i]
		if i > from {
			r.Prev = tr.records[i-1].Hash()
		}
		exec(`INSERT INTO audit_records (workspace_id, seq, recorded_at, client_id, entity_id, body) VALUES (?, ?, ?, ?, ?, ?)`,
			tr.workspace, r.Seq, r.At.UnixMicro(), sql.NullString{String: r.Client, Valid: r.Client != ""},
			sql.NullString{String: r.Entity.ID, Valid: r.Entity.ID != ""}, r.Canonical())
	}
	last := tr.records[len(tr.records)-1]
	exec(`UPDATE audit_heads SET seq = ?, hash = ? WHERE workspace_id = ?`, last.Seq, last.Hash().String(), tr.workspace)
}

// TestAuditTamperingCaught: a writer of the database alters the audit
// trail in the four ways the chain alone let through (every later record
// rehashed, and the head moved, after each change), on copies of a
// stopped stack's database; `hdc audit verify` with the backend's
// checkpoints fails on each, naming the first record that is not as
// written, or the trail that is missing.
func TestAuditTamperingCaught(t *testing.T) {
	t.Parallel()
	checkpoints := "file://" + filepath.ToSlash(t.TempDir()) + "?create_dir=true"
	s := hdctest.StartStack(t, "HDC_AUDIT_CHECKPOINTS="+checkpoints)
	a, b := s.NewClient("tamper-a"), s.NewClient("tamper-b")
	for _, c := range []*hdctest.APIClient{a, a, b} {
		tk := s.Login(c, false, "")
		s.Upload(c, tk, false, []byte("a record of "+c.Workspace), "")
	}
	s.Stop() // the backend writes its last checkpoint as it stops
	verify := func(t *testing.T, dir string, broken *audit.Break) {
		s.VerifyAudit(t, []string{"--data", dir, "--checkpoints", checkpoints}, broken)
	}
	verify(t, s.CopyDatabase(t, ""), nil)

	tests := []struct {
		name   string
		tamper func(t *testing.T, db *sql.DB) *audit.Break
	}{
		{"a record's source and client rewritten, the rest rehashed", func(t *testing.T, db *sql.DB) *audit.Break {
			tr := readTrail(t, db, a.Workspace)
			r := &tr.records[2]
			r.Source, r.Client = netip.MustParseAddr("192.0.2.7"), b.ID
			tr.rewrite(t, 2)
			return &audit.Break{Workspace: a.Workspace, Seq: r.Seq + 1, Reason: fmt.Sprintf("its prev is not the hash of record %d (one of them was altered)", r.Seq)}
		}},
		{"the last record deleted, the head moved back", func(t *testing.T, db *sql.DB) *audit.Break {
			tr := readTrail(t, db, a.Workspace)
			last := tr.records[len(tr.records)-1]
			for _, q := range []struct {
				sql  string
				args []any
			}{
				{`DELETE FROM audit_records WHERE workspace_id = ? AND seq = ?`, []any{a.Workspace, last.Seq}},
				{`UPDATE audit_heads SET seq = ?, hash = ? WHERE workspace_id = ?`, []any{last.Seq - 1, last.Prev.String(), a.Workspace}},
			} {
				if _, err := db.Exec(q.sql, q.args...); err != nil {
					t.Fatal(err)
				}
			}
			return &audit.Break{Workspace: a.Workspace, Seq: last.Seq, Reason: fmt.Sprintf("records %d to %d are missing: a checkpoint saw the chain reach record %d", last.Seq, last.Seq, last.Seq)}
		}},
		{"a middle record deleted, the rest renumbered and rehashed", func(t *testing.T, db *sql.DB) *audit.Break {
			tr := readTrail(t, db, a.Workspace)
			gone := tr.records[1]
			tr.records = append(tr.records[:1], tr.records[2:]...)
			for i := 1; i < len(tr.records); i++ {
				tr.records[i].Seq--
			}
			tr.records[1].Prev = gone.Prev
			tr.rewrite(t, 1)
			return &audit.Break{Workspace: a.Workspace, Seq: gone.Seq + 1, Reason: fmt.Sprintf("its prev is not the hash of record %d (one of them was altered)", gone.Seq)}
		}},
		{"a whole trail deleted with its head", func(t *testing.T, db *sql.DB) *audit.Break {
			tr := readTrail(t, db, b.Workspace)
			for _, q := range []string{`DELETE FROM audit_records WHERE workspace_id = ?`, `DELETE FROM audit_heads WHERE workspace_id = ?`} {
				if _, err := db.Exec(q, b.Workspace); err != nil {
					t.Fatal(err)
				}
			}
			n := tr.records[len(tr.records)-1].Seq
			return &audit.Break{Workspace: b.Workspace, Seq: 1, Reason: fmt.Sprintf("the trail is missing: a checkpoint saw it reach record %d", n)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := s.CopyDatabase(t, "")
			db, err := sql.Open("sqlite", filepath.Join(dir, "hdc.db"))
			if err != nil {
				t.Fatal(err)
			}
			broken := tt.tamper(t, db)
			db.Close()
			verify(t, dir, broken)
		})
	}
}
