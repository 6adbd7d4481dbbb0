package admin_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/internal/problem"
)

// TestClientAudit: the client's audit methods get what the service
// answers: a page of listed records, the export's lines, the report; a
// refusal as its problem.
func TestClientAudit(t *testing.T) {
	t.Parallel()
	url, callers, _ := admin.StartAPI(t)
	op := dial(t, url, callers["operator"])
	aud := dial(t, url, callers["auditor"])
	ctx := t.Context()
	if _, err := op.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w1"}); err != nil {
		t.Fatal(err)
	}
	p, err := aud.SearchAudit(ctx, adminapi.AuditQuery{Workspace: "w1", Scoped: true})
	if err != nil || len(p.Items) != 1 || !strings.Contains(string(p.Items[0]), `"action":"client_create"`) || p.Next != "" {
		t.Fatalf("SearchAudit: %+v, %v", p, err)
	}
	var out strings.Builder
	if err := aud.ExportAudit(ctx, adminapi.AuditQuery{Agent: "alice@example.org"}, &out); err != nil || strings.Count(out.String(), `"resourceType":"AuditEvent"`) != 1 {
		t.Fatalf("ExportAudit: %q, %v", out.String(), err)
	}
	rep, err := aud.VerifyAudit(ctx)
	if err != nil || len(rep.Trails) != 2 || rep.Trails[0].Status != trail.StatusOK || rep.Trails[1].Status != trail.StatusOK {
		t.Fatalf("VerifyAudit: %+v, %v", rep, err)
	}
	if p, err := aud.SearchAudit(ctx, adminapi.AuditQuery{Newest: true, Limit: 1}); err != nil || len(p.Items) != 1 ||
		!strings.Contains(string(p.Items[0]), `"action":"audit_verify"`) || p.Next == "" {
		t.Fatalf("SearchAudit newest first: %+v, %v; want the verification's record, and a next page", p, err)
	}
	var pr *problem.Problem
	if _, err := aud.SearchAudit(ctx, adminapi.AuditQuery{Limit: 5000}); !errors.As(err, &pr) || pr.Status != 400 {
		t.Fatalf("a page too large: %v, want 400", err)
	}
	if err := aud.ExportAudit(ctx, adminapi.AuditQuery{Agent: "no one"}, &out); !errors.As(err, &pr) || pr.Code != problem.CodeInvalidRequest {
		t.Fatalf("an export of no one: %v, want invalid_request", err)
	}
}

// TestClientVerifyBeforeTheFirstCheckpoint: with no checkpoint in the
// backend's bucket yet, VerifyAudit returns the trails the backend
// verified with the problem no_checkpoint as its error.
func TestClientVerifyBeforeTheFirstCheckpoint(t *testing.T) {
	t.Parallel()
	url, callers, _ := admin.StartAPIWith(t, trail.Config{Checkpoints: "file://" + t.TempDir()})
	op := dial(t, url, callers["operator"])
	if _, err := op.CreateClient(t.Context(), adminapi.CreateClientRequest{WorkspaceID: "w1"}); err != nil {
		t.Fatal(err)
	}
	rep, err := dial(t, url, callers["auditor"]).VerifyAudit(t.Context())
	if p := adminapi.AsNoCheckpoint(err); p == nil || p.Status != 409 || len(rep.Trails) != 1 || rep.Trails[0].Workspace != "w1" ||
		rep.Trails[0].Status != trail.StatusOK || rep.Checkpoint != nil {
		t.Fatalf("VerifyAudit: %+v, %v", rep, err)
	}
}
