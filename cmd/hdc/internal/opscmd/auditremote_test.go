package opscmd

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/admintest"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
	"github.com/health-data-connect/hdc/internal/pki"
)

// TestAuditThroughTheAPI: hdc audit list, export and verify with --admin,
// an auditor's certificate and no database print what they print in
// direct mode; each read through the API is then in the trail, naming the
// auditor.
func TestAuditThroughTheAPI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedAudit(t, dir)
	st, err := storage.Database{DataDir: dir, Keeper: clitest.KeeperURL}.OpenExisting(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hop := t.TempDir()
	if err := pki.InitDir(hop, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	const bob = "bob@example.org"
	if _, err := pki.IssueFromDir(hop, pki.Leaf{Role: pki.Auditor, Name: bob}, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	svc := admin.New(st, identity.New(st, 1), keyadmin.New(st), admin.WithTrail(trail.New(st, trail.Config{})))
	remote := []string{"--admin", admintest.Serve(t, svc, admin.HandlerConfig{}, hop), "--cert", filepath.Join(hop, bob+".pem"),
		"--key", filepath.Join(hop, bob+"-key.pem"), "--ca", filepath.Join(hop, pki.CAFile), "--data", t.TempDir()}
	for _, args := range [][]string{
		{"audit", "list"},
		{"audit", "list", "--workspace", "acme", "--limit", "2"},
		{"audit", "list", "--workspace", ""},
		{"audit", "list", "--agent", auditClientB, "--since", "2026-03-15"},
		{"audit", "export", "--entity", auditCare},
		{"audit", "verify"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			direct, err := hdc(t, dir, args...)
			if err != nil || direct == "" {
				t.Fatalf("direct: %q, %v", direct, err)
			}
			res := clitest.Run(t, nil, append(args, remote...)...)
			if res.Err != nil || string(res.Stdout) != direct {
				t.Fatalf("through the API: %v\n%s%s\nwant\n%s", res.Err, res.Stdout, res.Stderr, direct)
			}
		})
	}
	got := auditActions(t, mustOut(hdc(t, dir, "audit", "list", "--agent", bob)))
	want := []string{"/2 audit_search", "/3 audit_search", "/4 audit_search", "/5 audit_export", "/6 audit_verify", "acme/4 audit_search"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the auditor's reads in the trail: %v, want %v", got, want)
	}
}

// auditActions returns the workspace/seq action of each listed line.
func auditActions(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for line := range strings.Lines(out) {
		l := decode[listedLine](t, line)
		got = append(got, l.Workspace+"/"+strconv.FormatInt(l.Seq, 10)+" "+l.Action)
	}
	return got
}
