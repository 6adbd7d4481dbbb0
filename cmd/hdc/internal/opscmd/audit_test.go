package opscmd

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
)

// Ids of the seeded trails.
const (
	auditClientA = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
	auditClientB = "6b2dab63-4c8f-4e1f-8054-3f9f2d7c8b02"
	auditCare    = "9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"
)

// seedAudit writes trails to the SQLite database in dir: acme's three
// records, globex's one and the installation's one.
func seedAudit(t *testing.T, dir string) {
	t.Helper()
	st, err := storage.OpenStore(t.Context(), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	care := audit.Entity{Kind: audit.EntityCareContext, ID: auditCare}
	for _, e := range []audit.Event{
		{At: day(14, 10), Action: audit.Login, Outcome: audit.Success, Workspace: "acme", Client: auditClientA},
		{At: day(15, 10), Action: audit.RecordRetrieve, Outcome: audit.Success, Workspace: "acme", Client: auditClientB, Entity: care},
		{At: day(16, 10), Action: audit.RecordRetrieve, Outcome: audit.Denied, Workspace: "acme", Client: auditClientA, Entity: care},
		{At: day(15, 12), Action: audit.Login, Outcome: audit.Success, Workspace: "globex", Client: auditClientB},
		{At: day(14, 11), Action: audit.LoginFailed, Outcome: audit.Denied},
	} {
		if _, err := st.AppendAudit(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
}

// listedLine is what a line of audit list holds that the tests look at.
type listedLine struct {
	Workspace string `json:"workspace"`
	Seq       int64  `json:"seq"`
	Action    string `json:"action"`
	Hash      string `json:"hash"`
}

// positions names lines as workspace/seq.
func positions(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for line := range strings.Lines(out) {
		l := decode[listedLine](t, line)
		got = append(got, fmt.Sprintf("%s/%d", l.Workspace, l.Seq))
	}
	return got
}

func TestAuditList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedAudit(t, dir)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"every trail", nil, []string{"/1", "acme/1", "acme/2", "acme/3", "globex/1"}},
		{"one workspace", []string{"--workspace", "acme"}, []string{"acme/1", "acme/2", "acme/3"}},
		{"the installation's", []string{"--workspace", ""}, []string{"/1"}},
		{"unknown workspace", []string{"--workspace", "nowhere"}, nil},
		{"since a date", []string{"--since", "2026-03-15"}, []string{"acme/2", "acme/3", "globex/1"}},
		{"until a date, through its end", []string{"--until", "2026-03-15"}, []string{"/1", "acme/1", "acme/2", "globex/1"}},
		{"until a time, excluded", []string{"--until", "2026-03-15T10:00:00Z"}, []string{"/1", "acme/1"}},
		{"since and until, another zone", []string{"--since", "2026-03-15T15:30:00+05:30", "--until", "2026-03-15"}, []string{"acme/2", "globex/1"}},
		{"since and until the same day", []string{"--since", "2026-03-16", "--until", "2026-03-16"}, []string{"acme/3"}},
		{"entity", []string{"--entity", auditCare}, []string{"acme/2", "acme/3"}},
		{"agent", []string{"--agent", auditClientB}, []string{"acme/2", "globex/1"}},
		{"limit across trails", []string{"--limit", "2"}, []string{"/1", "acme/1"}},
		{"limit in a workspace", []string{"--workspace", "acme", "--limit", "2"}, []string{"acme/1", "acme/2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := hdc(t, dir, append([]string{"audit", "list"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got := positions(t, out); !slices.Equal(got, tt.want) {
				t.Errorf("audit list %v = %v, want %v", tt.args, got, tt.want)
			}
		})
	}

	// Each line is the record's canonical form with its hash added: the
	// hash is the SHA-256 of the line without it, and the next record's prev.
	out, err := hdc(t, dir, "audit", "list", "--workspace", "acme")
	if err != nil {
		t.Fatal(err)
	}
	var prev string
	for line := range strings.Lines(out) {
		l := decode[listedLine](t, line)
		canonical := strings.Replace(strings.TrimSuffix(line, "\n"), `,"hash":"`+l.Hash+`"`, "", 1)
		sum := sha256.Sum256([]byte(canonical))
		if hex.EncodeToString(sum[:]) != l.Hash {
			t.Errorf("record %d: hash %s is not the SHA-256 of %s", l.Seq, l.Hash, canonical)
		}
		r, err := audit.Parse([]byte(canonical))
		if err != nil {
			t.Errorf("record %d: %v", l.Seq, err)
		} else if prev != "" && r.Prev.String() != prev {
			t.Errorf("record %d: prev %s, want %s", l.Seq, r.Prev, prev)
		}
		prev = l.Hash
	}
}

func TestAuditExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedAudit(t, dir)
	out, err := hdc(t, dir, "audit", "export", "--workspace", "acme", "--entity", auditCare)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for line := range strings.Lines(out) {
		var ae struct {
			ResourceType string `json:"resourceType"`
			ID           string `json:"id"`
			Recorded     string `json:"recorded"`
		}
		if err := json.Unmarshal([]byte(line), &ae); err != nil || ae.ResourceType != "AuditEvent" || ae.ID == "" || ae.Recorded == "" {
			t.Errorf("line %q: %+v, %v", line, ae, err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("exported %d AuditEvents, want 2:\n%s", n, out)
	}
}

func TestAuditCommandErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedAudit(t, dir)
	tests := []struct {
		name string
		args []string
		data string
		want string
	}{
		{"since not a time", []string{"audit", "list", "--since", "yesterday"}, dir, "want a date"},
		{"until not a time", []string{"audit", "export", "--until", "2026-13-01"}, dir, "want a date"},
		{"negative limit", []string{"audit", "list", "--limit", "-1"}, dir, "negative"},
		{"no database", []string{"audit", "verify"}, t.TempDir(), "no database"},
		{"no database to list", []string{"audit", "list"}, t.TempDir(), "no database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := hdc(t, tt.data, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
			}
		})
	}
}

// auditDB opens the SQLite database in dir directly, behind the store.
func auditDB(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestAuditVerify: verify passes an intact database, and names the first
// break of one whose audit table was changed behind the store's back.
func TestAuditVerify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tamper string // SQL run on the database; empty for none
		want   string // in the error; empty when verify passes
		status map[string]string
	}{
		{"intact", "", "", map[string]string{"": "ok", "acme": "ok", "globex": "ok"}},
		{"record altered", `UPDATE audit_records SET body = replace(body, '"outcome":"success"', '"outcome":"failed"') WHERE workspace_id = 'acme' AND seq = 2`,
			`workspace "acme" breaks at record 3`, map[string]string{"": "ok", "acme": "broken", "globex": "ok"}},
		{"last record altered", `UPDATE audit_records SET body = replace(body, '"outcome":"denied"', '"outcome":"failed"') WHERE workspace_id = 'acme' AND seq = 3`,
			`workspace "acme" breaks at record 3`, map[string]string{"": "ok", "acme": "broken", "globex": "ok"}},
		{"record deleted", `DELETE FROM audit_records WHERE workspace_id = 'acme' AND seq = 2`,
			`workspace "acme" breaks at record 2`, map[string]string{"": "ok", "acme": "broken", "globex": "ok"}},
		{"first of two broken trails named", `DELETE FROM audit_records WHERE workspace_id IN ('acme', 'globex') AND seq = 1`,
			`workspace "acme" breaks at record 1`, map[string]string{"": "ok", "acme": "broken", "globex": "broken"}},
		{"the installation's trail", `DELETE FROM audit_records WHERE workspace_id = ''`,
			`the installation (workspace "") breaks at record 1`, map[string]string{"": "broken", "acme": "ok", "globex": "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			seedAudit(t, dir)
			if tt.tamper != "" {
				res, err := auditDB(t, dir).Exec(tt.tamper)
				if err != nil {
					t.Fatal(err)
				}
				if n, _ := res.RowsAffected(); n == 0 {
					t.Fatal("the tampering changed no row")
				}
			}
			out, err := hdc(t, dir, "audit", "verify")
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("verify: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("verify: error %v, want %q", err, tt.want)
			}
			status := map[string]string{}
			for line := range strings.Lines(out) {
				s := decode[trail.Status](t, line)
				status[s.Workspace] = s.Status
			}
			if !maps.Equal(status, tt.status) {
				t.Errorf("statuses %v, want %v\n%s", status, tt.status, out)
			}
		})
	}
}

// auditEntries returns the workspace/seq action entity of each record in
// dir's trails.
func auditEntries(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	out, err := hdc(t, dir, append([]string{"audit", "list"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for line := range strings.Lines(out) {
		var l struct {
			listedLine
			Outcome string `json:"outcome"`
			Client  string `json:"client"`
			Entity  struct{ Kind, ID string }
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l.Client != "" {
			t.Errorf("an operator's record names client %s", l.Client)
		}
		got = append(got, fmt.Sprintf("%s/%d %s %s %s:%s", l.Workspace, l.Seq, l.Action, l.Outcome, l.Entity.Kind, l.Entity.ID))
	}
	return got
}

// TestOperatorActionsAudited: the operator commands on clients, grants and
// keys append their records, which verify.
func TestOperatorActionsAudited(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.json")
	run := func(args ...string) string {
		t.Helper()
		out, err := hdc(t, dir, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out
	}
	a := decode[adminapi.Credentials](t, run("clients", "create", "--workspace", "acme"))
	b := decode[adminapi.Credentials](t, run("clients", "create", "--workspace", "globex"))
	g := decode[adminapi.IssuedGrant](t, run("sharing", "grant", "--workspace", "acme", "--client", b.ClientID))
	run("sharing", "revoke", "--grant", g.GrantID)
	run("clients", "disable", "--client", b.ClientID)
	run("keys", "add", "--registry", reg, "--client", a.ClientID, "--kid", "acme-1")
	k := decode[adminapi.IssuedKey](t, run("keys", "rotate", "--registry", reg, "--client", a.ClientID))
	run("keys", "retire", "--registry", reg, "--kid", "acme-1")
	run("keys", "add", "--registry", reg, "--client", "not-in-the-database", "--kid", "stray-1")

	want := []string{
		"/1 key_add success key:stray-1",
		"acme/1 client_create success client:" + a.ClientID,
		"acme/2 sharing_grant success grant:" + g.GrantID,
		"acme/3 sharing_revoke success grant:" + g.GrantID,
		"acme/4 key_add success key:acme-1",
		"acme/5 key_rotate success key:" + k.Kid,
		"acme/6 key_retire success key:acme-1",
		"globex/1 client_create success client:" + b.ClientID,
		"globex/2 client_disable success client:" + b.ClientID,
	}
	if got := auditEntries(t, dir); !slices.Equal(got, want) {
		t.Errorf("the trails hold\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := hdc(t, dir, "audit", "verify"); err != nil {
		t.Errorf("verify: %v", err)
	}
	// A change that fails records nothing.
	if _, err := hdc(t, dir, "clients", "disable", "--client", "nobody"); err == nil {
		t.Fatal("disabling an unknown client succeeded")
	}
	if got := auditEntries(t, dir); len(got) != len(want) {
		t.Errorf("a failed command was recorded: %v", got)
	}
}

// TestOperatorActionsFailUnaudited: when the audit record cannot be
// written, the operator's command fails and changes nothing; with no
// database, a key command changes the registry and warns.
func TestOperatorActionsFailUnaudited(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.json")
	a := decode[adminapi.Credentials](t, mustOut(hdc(t, dir, "clients", "create", "--workspace", "acme")))
	db := auditDB(t, dir)
	if _, err := db.Exec(`CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_records BEGIN SELECT RAISE(ABORT, 'audit disk full'); END`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"clients create", []string{"clients", "create", "--workspace", "acme"}},
		{"clients disable", []string{"clients", "disable", "--client", a.ClientID}},
		{"sharing grant", []string{"sharing", "grant", "--workspace", "globex", "--client", a.ClientID}},
		{"keys add", []string{"keys", "add", "--registry", reg, "--client", a.ClientID}},
	}
	if _, err := hdc(t, dir, "clients", "create", "--workspace", "globex"); err == nil {
		t.Fatal("clients create succeeded with the audit trail refusing records")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := hdc(t, dir, tt.args...); err == nil || !strings.Contains(err.Error(), "audit disk full") {
				t.Fatalf("%v: error %v, want the audit's", tt.args, err)
			}
		})
	}
	var clients, grants int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM clients), (SELECT count(*) FROM sharing_grants)`).Scan(&clients, &grants); err != nil {
		t.Fatal(err)
	}
	var status string
	if err := db.QueryRow(`SELECT status FROM clients WHERE id = ?`, a.ClientID).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if clients != 1 || grants != 0 || status != "active" {
		t.Errorf("unaudited changes were made: %d clients, %d grants, status %s", clients, grants, status)
	}
	if _, err := os.Stat(reg); !os.IsNotExist(err) {
		t.Errorf("the registry was written: %v", err)
	}

	// No database at all: the key is added, unaudited, and stderr says so.
	res := clitest.Run(t, nil, "keys", "add", "--registry", reg, "--client", a.ClientID, "--data", t.TempDir())
	if res.Err != nil || !strings.Contains(string(res.Stderr), "not in the audit trail") {
		t.Fatalf("keys add without a database: %v\n%s", res.Err, res.Stderr)
	}
	if _, err := os.Stat(reg); err != nil {
		t.Errorf("the registry was not written: %v", err)
	}
}

func mustOut(out string, err error) string {
	if err != nil {
		panic(err)
	}
	return out
}

func TestAuditHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"audit", "--help"}, {"audit", "list", "--help"}, {"audit", "export", "--help"}, {"audit", "verify", "--help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			res := clitest.Run(t, nil, args...)
			if res.Err != nil || !strings.Contains(string(res.Stdout), "Usage:") {
				t.Errorf("%v: %v\n%s%s", args, res.Err, res.Stdout, res.Stderr)
			}
		})
	}
}

// TestAuditVerifyBeforeTheFirstCheckpoint: with a checkpoints' bucket that
// holds none yet, verify prints each trail's line, says that the chains
// were verified but not against a checkpoint, and exits
// ExitNoCheckpoint; a break still exits 1 naming it, and says that there
// was no checkpoint.
func TestAuditVerifyBeforeTheFirstCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedAudit(t, dir)
	bucket := "file://" + t.TempDir()
	verify := func() (clitest.Result, int) {
		res := clitest.Run(t, nil, "audit", "verify", "--checkpoints", bucket, "--data", dir)
		var exit *exec.ExitError
		if !errors.As(res.Err, &exit) {
			return res, 0
		}
		return res, exit.ExitCode()
	}
	res, status := verify()
	if status != ExitNoCheckpoint || !strings.Contains(string(res.Stderr), "hdc: no checkpoint in "+bucket+" yet: the trails' chains were verified") {
		t.Fatalf("verify: exit status %d\n%s", status, res.Stderr)
	}
	chains := map[string]string{}
	for line := range strings.Lines(string(res.Stdout)) {
		s := decode[trail.Status](t, line)
		chains[s.Workspace] = s.Status
	}
	if want := map[string]string{"": "ok", "acme": "ok", "globex": "ok"}; !maps.Equal(chains, want) {
		t.Errorf("statuses %v, want %v", chains, want)
	}
	if _, err := auditDB(t, dir).Exec(`DELETE FROM audit_records WHERE workspace_id = 'acme' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	res, status = verify()
	if stderr := string(res.Stderr); status != 1 || !strings.Contains(stderr, `workspace "acme" breaks at record 2`) || !strings.Contains(stderr, "no checkpoint in "+bucket) {
		t.Fatalf("verify of a broken trail: exit status %d\n%s", status, stderr)
	}
}
