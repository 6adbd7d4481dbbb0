package e2e

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/blob/blobtest"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestAuditVerifyBeforeTheFirstCheckpoint (fifth review, finding 9): a new
// fleet whose backend checkpoints the trails to an S3 bucket (gofakes3)
// that holds none yet. GET /admin/v1/audit/verify answers 409
// no_checkpoint with the trails it verified, never a 500; hdc audit
// verify, through the API and direct, prints each trail's line, says that
// no checkpoint exists yet and that the chains were verified, and exits
// 3. Once the backend has written its checkpoint (as it stops), verify
// passes against it.
func TestAuditVerifyBeforeTheFirstCheckpoint(t *testing.T) {
	t.Parallel()
	endpoint, _ := blobtest.S3Server(t, "checkpoints")
	bucket := "s3://checkpoints?path_style=true&region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
	aws := []string{"AWS_ACCESS_KEY_ID=hdc", "AWS_SECRET_ACCESS_KEY=hdc-test-secret", "AWS_EC2_METADATA_DISABLED=true"}
	s := hdctest.StartStack(t, append([]string{"HDC_AUDIT_CHECKPOINTS=" + bucket, "HDC_AUDIT_CHECKPOINT_INTERVAL=1h"}, aws...)...)
	s.NewClient("verify") // a workspace's trail, beside the installation's
	op := s.Person(pki.Operator, "alice@example.org")

	a := adminGet(t, op, "/audit/verify")
	testkit.WantProblem(t, a.Status, a.Header, a.Body, http.StatusConflict, "no_checkpoint")
	var answer struct {
		Trails []struct{ Workspace, Status string }
	}
	if err := json.Unmarshal(a.Body, &answer); err != nil || len(answer.Trails) != 1 || answer.Trails[0].Workspace != "verify" || answer.Trails[0].Status != "ok" {
		t.Fatalf("the problem's trails: %v %s; want the workspace's, ok", err, a.Body)
	}

	s.Env = append(s.Env, aws...)
	direct := []string{"--checkpoints", bucket}
	for mode, run := range map[string]func() (string, string, error){
		"through the API": func() (string, string, error) { return op.HDCRun("audit", "verify") },
		"direct":          func() (string, string, error) { return s.HDCRun(append([]string{"audit", "verify"}, direct...)...) },
	} {
		out, stderr, err := run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 3 {
			t.Errorf("hdc audit verify (%s): %v, want exit status 3\n%s", mode, err, stderr)
		}
		if !strings.Contains(stderr, "no checkpoint") || !strings.Contains(stderr, "s3://checkpoints") || !strings.Contains(stderr, "verified") {
			t.Errorf("hdc audit verify (%s) said %q; want that the bucket holds no checkpoint yet and what was verified", mode, stderr)
		}
		chains := hdctest.VerifiedChains(t, out)
		if c, ok := chains["verify"]; !ok || c.Status != "ok" {
			t.Errorf("hdc audit verify (%s) printed %q; want the workspace's trail, ok", mode, out)
		}
		for ws, c := range chains {
			if c.Status != "ok" {
				t.Errorf("hdc audit verify (%s): the trail of %q is %s", mode, ws, c.Status)
			}
		}
	}

	s.Stop() // the backend writes a checkpoint as it stops
	_, stderr, err := s.HDCRun(append([]string{"audit", "verify"}, direct...)...)
	if err != nil || !strings.Contains(stderr, "against the checkpoint") {
		t.Fatalf("hdc audit verify once a checkpoint exists: %v\n%s", err, stderr)
	}
}
