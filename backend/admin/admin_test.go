package admin

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestRoleMatrix: every route of the Admin API, as every kind of caller.
// An operator is served on every route and an auditor on the reads; every
// other role and a request without a certificate are refused with 403
// forbidden, and a certificate of another authority does not get through
// the handshake. "Served" means the route answered for itself: whatever it
// answers to a request without a body or with ids that do not exist, it is
// not the person check's 403.
func TestRoleMatrix(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	pathID := regexp.MustCompile(`\{[a-z_]+\}`)
	for _, rt := range adminapi.Routes() {
		path := pathID.ReplaceAllString(rt.Path, "none")
		for _, who := range matrixCallers {
			t.Run(rt.Method+" "+rt.Path+" as "+who, func(t *testing.T) {
				r := a.do(who, rt.Method, path, nil)
				switch {
				case who == "foreign CA":
					if r.err == nil {
						t.Fatalf("a certificate of another authority got through: %d %s", r.status, r.body)
					}
				case slices.Contains(rt.Roles, contract.Role(who)):
					if r.err != nil || r.status == http.StatusForbidden || r.status == http.StatusUnauthorized {
						t.Fatalf("refused: %d %s (%v)", r.status, r.body, r.err)
					}
				default:
					if r.err != nil || r.status != http.StatusForbidden || r.problemCode() != "forbidden" {
						t.Fatalf("got %d %s (%v), want 403 forbidden", r.status, r.body, r.err)
					}
				}
			})
		}
	}
}

// TestEveryRouteHandled: the handler binds every route of the table to
// a handler of its operation, and has no handler that no route names.
func TestEveryRouteHandled(t *testing.T) {
	t.Parallel()
	handlers := (&Handler{}).handlers()
	for _, rt := range adminapi.Routes() {
		if _, ok := handlers[rt.Name]; !ok {
			t.Errorf("%s (%s) has no handler", rt.Name, rt.Pattern())
		}
		delete(handlers, rt.Name)
	}
	for name := range handlers {
		t.Errorf("the handler of %s has no route", name)
	}
}

// TestClients: an operator creates a client, whose audit record names
// her; both persons list and read it a page at a time; the operator
// disables it; every answer is JSON, every refusal a problem.
func TestClients(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	var created []adminapi.Credentials
	for _, ws := range []string{"w1", "w1", "w2"} {
		var c adminapi.Credentials
		a.do("operator", "POST", "/admin/v1/clients", map[string]string{"workspace_id": ws}).decode(t, 201, &c)
		if c.ClientSecret == "" || c.WorkspaceID != ws {
			t.Fatalf("created %+v", c)
		}
		created = append(created, c)
	}
	rs, err := a.st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1", Agent: alice})
	if err != nil || len(rs) != 2 || rs[0].Action != audit.ClientCreate || rs[0].Person.Role != contract.RoleOperator || rs[0].Person.Serial == "" {
		t.Fatalf("w1's records by alice: %+v, %v", rs, err)
	}
	var page adminapi.Page[adminapi.Client]
	a.do("auditor", "GET", "/admin/v1/clients?limit=2", nil).decode(t, 200, &page)
	if len(page.Items) != 2 || page.Next == "" || page.Items[0].ClientID != created[0].ClientID {
		t.Fatalf("the first page: %+v", page)
	}
	var rest adminapi.Page[adminapi.Client]
	a.do("auditor", "GET", "/admin/v1/clients?limit=2&cursor="+page.Next, nil).decode(t, 200, &rest)
	if len(rest.Items) != 1 || rest.Next != "" || rest.Items[0].ClientID != created[2].ClientID {
		t.Fatalf("the second page: %+v", rest)
	}
	var c adminapi.Client
	a.do("operator", "POST", "/admin/v1/clients/"+created[1].ClientID+"/disable", nil).decode(t, 200, &c)
	if c.Status != string(store.ClientDisabled) {
		t.Fatalf("disabled: %+v", c)
	}
	var w2 adminapi.Page[adminapi.Client]
	a.do("auditor", "GET", "/admin/v1/clients?workspace=w2&status=active", nil).decode(t, 200, &w2)
	if len(w2.Items) != 1 || w2.Items[0].ClientID != created[2].ClientID || strings.Contains(string(a.do("auditor", "GET", "/admin/v1/clients", nil).body), "hdc_cs_") {
		t.Fatalf("w2's active clients: %+v (and no secret in a list)", w2)
	}
}

// TestRefusals: bad input is a problem with a stable code and changes
// nothing.
func TestRefusals(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	tests := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"an invalid workspace", "POST", "/admin/v1/clients", map[string]string{"workspace_id": "a/b"}, 400, "invalid_request"},
		{"an unknown member", "POST", "/admin/v1/clients", map[string]string{"workspace": "w1"}, 400, "invalid_request"},
		{"no body", "POST", "/admin/v1/clients", nil, 415, "unsupported_media_type"},
		{"an unknown client", "GET", "/admin/v1/clients/" + "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01", nil, 404, "not_found"},
		{"a client id of the wrong syntax", "GET", "/admin/v1/clients/..%2f", nil, 404, "not_found"},
		{"disabling nobody", "POST", "/admin/v1/clients/nobody/disable", nil, 404, "not_found"},
		{"an unknown parameter", "GET", "/admin/v1/clients?page=2", nil, 400, "invalid_request"},
		{"a parameter twice", "GET", "/admin/v1/clients?status=active&status=disabled", nil, 400, "invalid_request"},
		{"an unknown status", "GET", "/admin/v1/clients?status=gone", nil, 400, "invalid_request"},
		{"a limit too large", "GET", "/admin/v1/clients?limit=1001", nil, 400, "invalid_request"},
		{"a cursor not given", "GET", "/admin/v1/clients?cursor=AAAA", nil, 400, "invalid_request"},
		{"an unknown route", "GET", "/admin/v1/nothing", nil, 404, "not_found"},
		{"another method", "DELETE", "/admin/v1/clients", nil, 405, "method_not_allowed"},
		{"a serial that is not hex", "POST", "/admin/v1/revocations", map[string]string{"serial": "xyz"}, 400, "invalid_request"},
		{"a revocation's time", "POST", "/admin/v1/revocations", map[string]string{"serial": "0a", "revoked_by": "x"}, 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do("operator", tt.method, tt.path, tt.body)
			if r.status != tt.status || r.problemCode() != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	if list, err := a.st.ListClients(t.Context(), store.ClientFilter{}); err != nil || len(list) != 0 {
		t.Fatalf("the refusals made clients: %+v, %v", list, err)
	}
}

// TestWhoami: the API names the caller as the certificate does.
func TestWhoami(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	for who, name := range map[string]string{"operator": alice, "auditor": bob} {
		var p adminapi.Person
		a.do(who, "GET", "/admin/v1/whoami", nil).decode(t, 200, &p)
		if p.Name != name || p.Role != who || p.Serial == "" || p.Direct {
			t.Errorf("%s: %+v", who, p)
		}
	}
}
