package admin

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// TestDestinations: an operator grants a workspace a private receiver
// and revokes it, each change a record of the workspace's trail naming
// her and in force on this backend at once (its copy of the grants, read
// an hour ago, is read again); an auditor lists the grants and is refused
// the changes; bad requests are problems that change nothing.
func TestDestinations(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := t.Context()
	for _, ws := range []string{"w1", "w2"} {
		if _, err := a.st.EnsureWorkspace(ctx, ws, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	guard := webhook.NewGuard(webhook.GuardConfig{Grants: a.grants})
	admits := func(ws, addr string) bool {
		t.Helper()
		p, err := guard.Policy(ctx, ws)
		if err != nil {
			t.Fatal(err)
		}
		return p.Admit(netip.MustParseAddrPort(addr)) == nil
	}
	if admits("w1", "10.0.0.31:9999") {
		t.Fatal("a private receiver admitted before any grant")
	}
	var g Destination
	a.do("operator", "POST", "/admin/v1/workspaces/w1/webhook-destinations", map[string]any{"prefix": "10.0.0.31", "port": 9999},
		"Idempotency-Key", "grant-1").decode(t, 201, &g)
	if g.WorkspaceID != "w1" || g.Prefix != "10.0.0.31/32" || g.Port == nil || *g.Port != 9999 || g.CreatedBy != alice || g.RevokedAt != nil {
		t.Fatalf("granted %+v", g)
	}
	if !admits("w1", "10.0.0.31:9999") || admits("w2", "10.0.0.31:9999") || admits("w1", "10.0.0.31:9998") {
		t.Fatal("the grant is not in force at once on the backend that made it, for its workspace and port alone")
	}
	var net Destination
	a.do("operator", "POST", "/admin/v1/workspaces/w1/webhook-destinations", map[string]any{"prefix": "10.1.2.0/24"}).decode(t, 201, &net)
	var page Page[Destination]
	a.do("auditor", "GET", "/admin/v1/workspaces/w1/webhook-destinations", nil).decode(t, 200, &page)
	if len(page.Items) != 2 || page.Items[0].ID != g.ID || page.Items[1].ID != net.ID || page.Items[1].Port != nil {
		t.Fatalf("w1's grants: %+v", page)
	}
	var first Page[Destination]
	a.do("auditor", "GET", "/admin/v1/workspaces/w1/webhook-destinations?limit=1", nil).decode(t, 200, &first)
	var rest Page[Destination]
	a.do("auditor", "GET", "/admin/v1/workspaces/w1/webhook-destinations?limit=1&cursor="+first.Next, nil).decode(t, 200, &rest)
	if len(first.Items) != 1 || first.Items[0].ID != g.ID || len(rest.Items) != 1 || rest.Items[0].ID != net.ID || rest.Next != "" {
		t.Fatalf("pages of one: %+v, then %+v", first, rest)
	}

	refusals := []struct {
		name, who, method, path string
		body                    any
		status                  int
		code                    string
	}{
		{"an auditor's grant", "auditor", "POST", "/admin/v1/workspaces/w1/webhook-destinations", map[string]any{"prefix": "10.0.0.32"}, 403, "forbidden"},
		{"an auditor's revocation", "auditor", "DELETE", "/admin/v1/workspaces/w1/webhook-destinations/" + g.ID, nil, 403, "forbidden"},
		{"a name", "operator", "POST", "/admin/v1/workspaces/w1/webhook-destinations", map[string]any{"prefix": "hooks.internal"}, 400, "invalid_request"},
		{"port 0", "operator", "POST", "/admin/v1/workspaces/w1/webhook-destinations", map[string]any{"prefix": "10.0.0.32", "port": 0}, 400, "invalid_request"},
		{"a port too large", "operator", "POST", "/admin/v1/workspaces/w1/webhook-destinations", map[string]any{"prefix": "10.0.0.32", "port": 65536}, 400, "invalid_request"},
		{"the metadata service", "operator", "POST", "/admin/v1/workspaces/w1/webhook-destinations", map[string]any{"prefix": "169.254.0.0/16"}, 400, "invalid_request"},
		{"an unknown member", "operator", "POST", "/admin/v1/workspaces/w1/webhook-destinations", map[string]any{"address": "10.0.0.32"}, 400, "invalid_request"},
		{"the same grant again", "operator", "POST", "/admin/v1/workspaces/w1/webhook-destinations", map[string]any{"prefix": "10.0.0.31/32", "port": 9999}, 409, "conflict"},
		{"an unknown workspace", "operator", "POST", "/admin/v1/workspaces/w9/webhook-destinations", map[string]any{"prefix": "10.0.0.32"}, 404, "not_found"},
		{"an unknown workspace's list", "auditor", "GET", "/admin/v1/workspaces/w9/webhook-destinations", nil, 404, "not_found"},
		{"another workspace's grant", "operator", "DELETE", "/admin/v1/workspaces/w2/webhook-destinations/" + g.ID, nil, 404, "not_found"},
		{"a grant id that is no UUID", "operator", "DELETE", "/admin/v1/workspaces/w1/webhook-destinations/x", nil, 404, "not_found"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do(tt.who, tt.method, tt.path, tt.body)
			if r.status != tt.status || r.problemCode() != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	if list, err := a.st.ListDestinations(ctx, store.DestinationFilter{}); err != nil || len(list) != 2 {
		t.Fatalf("the refusals changed the grants: %+v, %v", list, err)
	}

	var revoked Destination
	a.do("operator", "DELETE", "/admin/v1/workspaces/w1/webhook-destinations/"+g.ID, nil).decode(t, 200, &revoked)
	if revoked.RevokedAt == nil || revoked.RevokedBy == nil || *revoked.RevokedBy != alice {
		t.Fatalf("revoked %+v", revoked)
	}
	if admits("w1", "10.0.0.31:9999") {
		t.Fatal("the revocation is not in force at once on the backend that made it")
	}
	rs, err := a.st.ListAudit(ctx, store.AuditFilter{Workspace: "w1", Agent: alice})
	if err != nil || len(rs) != 3 {
		t.Fatalf("w1's records by alice: %+v, %v", rs, err)
	}
	for i, want := range []audit.Action{audit.DestinationGrant, audit.DestinationGrant, audit.DestinationRevoke} {
		if rs[i].Action != want || rs[i].Entity.Kind != audit.EntityDestination || rs[i].Person.Serial == "" {
			t.Fatalf("record %d: %+v, want %s of a destination by alice", i, rs[i], want)
		}
	}
	if listed := string(a.do("auditor", "GET", "/admin/v1/workspaces/w1/webhook-destinations", nil).body); !strings.Contains(listed, `"revoked_by":"`+alice+`"`) {
		t.Fatalf("the list after the revocation: %s", listed)
	}
}
