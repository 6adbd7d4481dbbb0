package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestRunbookRotationKeepsTheKind (fourth review, finding 11; first
// deployment, findings 7 and 8): the rotation docs/keys.md's runbook gives,
// hdc keys rotate --client C, made an A128CBC-HS256 key without freshness
// whatever the key it replaced, silently: a client's envelopes were no
// longer checked for replays. The new key now keeps the replaced key's
// kind, which the edge holds it to; a weaker kind is refused unless
// allowed; retiring the client's last active key is refused unless forced;
// and the rotation's record is found by the key it replaced.
func TestRunbookRotationKeepsTheKind(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClientEnc("runbook-rotation", "", "--require-fresh")
	var k struct {
		Kid, Secret, Enc string
		RequireFresh     bool `json:"require_fresh"`
	}
	s.HDC(&k, "keys", "rotate", "--client", c.ID)
	if k.Enc != "A128CBC-HS256" || !k.RequireFresh {
		t.Fatalf("the runbook's rotation of a fresh A128CBC-HS256 key made %+v", k)
	}
	s.WaitForKey(k.Kid)
	rotated := *c
	rotated.Kid, rotated.Key = k.Kid, k.Secret
	hdctest.ExpectFreshnessRequired(t, s, &rotated)

	refusals := []struct {
		args []string
		says string
	}{
		{[]string{"keys", "rotate", "--client", c.ID, "--require-fresh=false"}, "--allow-weaker"},
		{[]string{"keys", "retire", "--kid", k.Kid}, "--force"},
	}
	for _, r := range refusals {
		if _, stderr, err := s.HDCRun(r.args...); err == nil || !strings.Contains(stderr, r.says) || !strings.Contains(stderr, "hdc: ") {
			t.Fatalf("hdc %s: %v %s, want a refusal saying %s", strings.Join(r.args, " "), err, stderr, r.says)
		}
	}
	var dry struct {
		DryRun  bool `json:"dry_run"`
		Changed bool
		Status  string
	}
	s.HDC(&dry, "keys", "retire", "--kid", k.Kid, "--force", "--dry-run")
	if !dry.DryRun || !dry.Changed || dry.Status != "retired" {
		t.Fatalf("a dry forced retirement printed %+v", dry)
	}
	var keys []struct {
		Kid, Status string
	}
	s.HDC(&keys, "keys", "list", "--client", c.ID, "--json")
	for _, l := range keys {
		if l.Kid == k.Kid && l.Status != "active" || l.Kid == c.Kid && l.Status != "retiring" || len(keys) != 2 {
			t.Fatalf("after the refusals and the dry run: %+v", keys)
		}
	}
	out, _, err := s.HDCRun("audit", "list", "--workspace", c.Workspace, "--entity", c.Kid)
	if err != nil {
		t.Fatal(err)
	}
	rotation := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			Action   string
			Entity   struct{ ID string }
			Replaced []string
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("hdc audit list printed %q", line)
		}
		rotation = rotation || r.Action == "key_rotate" && r.Entity.ID == k.Kid && len(r.Replaced) == 1 && r.Replaced[0] == c.Kid
	}
	if !rotation {
		t.Fatalf("hdc audit list --entity %s (the replaced key) does not find the rotation to %s:\n%s", c.Kid, k.Kid, out)
	}
}
