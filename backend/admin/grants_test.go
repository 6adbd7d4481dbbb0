package admin

import (
	"slices"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// grantFixture is an API with clients a (of w1) and b (of w2), and the
// grants an operator made: a's of w2 (under an Idempotency-Key, sent
// twice) and b's of w1.
type grantFixture struct {
	*api
	a, b   adminapi.Credentials
	g1, g2 adminapi.IssuedGrant
}

func newGrantFixture(t *testing.T) grantFixture {
	t.Helper()
	f := grantFixture{api: newAPI(t)}
	f.do("operator", "POST", "/admin/v1/clients", map[string]string{"workspace_id": "w1"}).decode(t, 201, &f.a)
	f.do("operator", "POST", "/admin/v1/clients", map[string]string{"workspace_id": "w2"}).decode(t, 201, &f.b)
	body := map[string]string{"workspace_id": "w2", "client_id": f.a.ClientID}
	f.do("operator", "POST", "/admin/v1/grants", body, web.HeaderIdempotencyKey, "grant-1").decode(t, 201, &f.g1)
	var again adminapi.IssuedGrant
	r := f.do("operator", "POST", "/admin/v1/grants", body, web.HeaderIdempotencyKey, "grant-1")
	r.decode(t, 201, &again)
	if again != f.g1 || r.header.Get(web.HeaderReplayed) != "true" {
		t.Fatalf("the replay of a grant: %+v (replayed %q), want %+v", again, r.header.Get(web.HeaderReplayed), f.g1)
	}
	f.do("operator", "POST", "/admin/v1/grants", map[string]string{"workspace_id": "w1", "client_id": f.b.ClientID}).decode(t, 201, &f.g2)
	return f
}

// TestGrants: an operator grants a client another workspace, the key shown
// once and the grant made once under its Idempotency-Key; both persons list
// and read the grants, never a key; the operator revokes one; each change's
// audit record names her.
func TestGrants(t *testing.T) {
	t.Parallel()
	f := newGrantFixture(t)
	if !strings.HasPrefix(f.g1.SharingKey, "hdc_sk_") || f.g1.WorkspaceID != "w2" || f.g1.ClientID != f.a.ClientID {
		t.Fatalf("granted %+v", f.g1)
	}
	if all, err := f.st.ListSharingGrants(t.Context(), store.GrantFilter{}); err != nil || len(all) != 2 {
		t.Fatalf("the store holds %d grants, %v: want 2 (the replay made none)", len(all), err)
	}
	var info adminapi.Grant
	r := f.do("auditor", "GET", "/admin/v1/grants/"+f.g1.GrantID, nil)
	r.decode(t, 200, &info)
	if info.GrantID != f.g1.GrantID || info.ClientID != f.a.ClientID || !info.RevokedAt.IsZero() || strings.Contains(string(r.body), "hdc_sk_") {
		t.Fatalf("the grant: %s", r.body)
	}
	f.do("operator", "POST", "/admin/v1/grants/"+f.g1.GrantID+"/revoke", nil).decode(t, 200, &info)
	if info.GrantID != f.g1.GrantID || info.RevokedAt.IsZero() {
		t.Fatalf("revoked: %+v", info)
	}
	for _, want := range []struct {
		ws     string
		action audit.Action
	}{{"w2", audit.SharingGrant}, {"w2", audit.SharingRevoke}, {"w1", audit.SharingGrant}} {
		rs, err := f.st.ListAudit(t.Context(), store.AuditFilter{Workspace: want.ws, Agent: alice})
		i := slices.IndexFunc(rs, func(r audit.Record) bool { return r.Action == want.action })
		if err != nil || i < 0 || rs[i].Person.Role != contract.RoleOperator || rs[i].Person.Serial == "" || rs[i].Entity.Kind != audit.EntityGrant {
			t.Fatalf("%s's %s by alice: %+v, %v", want.ws, want.action, rs, err)
		}
	}
}

// TestGrantPages: the list's filters and pages, as an auditor reads them.
func TestGrantPages(t *testing.T) {
	t.Parallel()
	f := newGrantFixture(t)
	f.do("operator", "POST", "/admin/v1/grants/"+f.g1.GrantID+"/revoke", nil).decode(t, 200, nil)
	tests := []struct {
		name, query string
		want        []string
		next        bool
	}{
		{"every grant", "", []string{f.g1.GrantID, f.g2.GrantID}, false},
		{"a page", "?limit=1", []string{f.g1.GrantID}, true},
		{"a workspace", "?workspace=w1", []string{f.g2.GrantID}, false},
		{"a client", "?client=" + f.a.ClientID, []string{f.g1.GrantID}, false},
		{"the revoked", "?status=revoked", []string{f.g1.GrantID}, false},
		{"the active", "?status=active&limit=5", []string{f.g2.GrantID}, false},
		{"nothing", "?workspace=w3", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p adminapi.Page[adminapi.Grant]
			r := f.do("auditor", "GET", "/admin/v1/grants"+tt.query, nil)
			r.decode(t, 200, &p)
			var got []string
			for _, g := range p.Items {
				got = append(got, g.GrantID)
			}
			if !slices.Equal(got, tt.want) || (p.Next != "") != tt.next || strings.Contains(string(r.body), "hdc_sk_") {
				t.Fatalf("got %s, want %v (a next page: %v)", r.body, tt.want, tt.next)
			}
		})
	}
	var first, rest adminapi.Page[adminapi.Grant]
	f.do("auditor", "GET", "/admin/v1/grants?limit=1", nil).decode(t, 200, &first)
	f.do("auditor", "GET", "/admin/v1/grants?limit=1&cursor="+first.Next, nil).decode(t, 200, &rest)
	if len(rest.Items) != 1 || rest.Items[0].GrantID != f.g2.GrantID {
		t.Fatalf("the page after the first: %+v", rest)
	}
}

// TestGrantRefusals: bad input is a problem with a stable code and grants
// nothing.
func TestGrantRefusals(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	var c adminapi.Credentials
	a.do("operator", "POST", "/admin/v1/clients", map[string]string{"workspace_id": "w1"}).decode(t, 201, &c)
	a.do("operator", "POST", "/admin/v1/clients", map[string]string{"workspace_id": "w2"}).decode(t, 201, nil)
	grant := func(ws, client string) map[string]string {
		return map[string]string{"workspace_id": ws, "client_id": client}
	}
	tests := []struct {
		name, who, method, path string
		body                    any
		status                  int
		code                    string
	}{
		{"the client's own workspace", "operator", "POST", "/admin/v1/grants", grant("w1", c.ClientID), 400, "invalid_request"},
		{"an invalid workspace", "operator", "POST", "/admin/v1/grants", grant("a/b", c.ClientID), 400, "invalid_request"},
		{"an unknown workspace", "operator", "POST", "/admin/v1/grants", grant("w9", c.ClientID), 404, "not_found"},
		{"an unknown client", "operator", "POST", "/admin/v1/grants", grant("w2", "nobody"), 404, "not_found"},
		{"an unknown member", "operator", "POST", "/admin/v1/grants", map[string]string{"workspace": "w2"}, 400, "invalid_request"},
		{"no body", "operator", "POST", "/admin/v1/grants", nil, 415, "unsupported_media_type"},
		{"an auditor's grant", "auditor", "POST", "/admin/v1/grants", grant("w2", c.ClientID), 403, "forbidden"},
		{"an unknown grant", "auditor", "GET", "/admin/v1/grants/5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01", nil, 404, "not_found"},
		{"a grant id of the wrong syntax", "auditor", "GET", "/admin/v1/grants/..%2f", nil, 404, "not_found"},
		{"revoking nothing", "operator", "POST", "/admin/v1/grants/nothing/revoke", nil, 404, "not_found"},
		{"an auditor's revocation", "auditor", "POST", "/admin/v1/grants/nothing/revoke", nil, 403, "forbidden"},
		{"an unknown status", "auditor", "GET", "/admin/v1/grants?status=gone", nil, 400, "invalid_request"},
		{"a client id of the wrong syntax", "auditor", "GET", "/admin/v1/grants?client=a%2Fb", nil, 400, "invalid_request"},
		{"an unknown parameter", "auditor", "GET", "/admin/v1/grants?since=2026-01-01", nil, 400, "invalid_request"},
		{"a cursor not given", "auditor", "GET", "/admin/v1/grants?cursor=AAAA", nil, 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do(tt.who, tt.method, tt.path, tt.body)
			if r.status != tt.status || r.problemCode() != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	if list, err := a.st.ListSharingGrants(t.Context(), store.GrantFilter{}); err != nil || len(list) != 0 {
		t.Fatalf("the refusals granted: %+v, %v", list, err)
	}
}
