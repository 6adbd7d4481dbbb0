package console

import (
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

// sharingRoutes are the sharing grants' pages and changes.
func (s *Server) sharingRoutes(page func(string, pageFunc) route, change func(string, changeFunc) route) []route {
	return []route{
		page("GET /sharing", s.sharingPage),
		page("GET /sharing/{id}/confirm", s.confirmSharingRevokePage),
		change("POST /sharing", s.grantSharing),
		change("POST /sharing/{id}/revoke", s.revokeSharing),
	}
}

// sharingView is a page of sharing grants, the filter that selected
// them, and the link to the next page.
type sharingView struct {
	Workspace, Client, Status string
	Statuses                  []string
	Grants                    []adminapi.Grant
	Next                      string
}

// sharingPage lists the sharing grants a page at a time, of a workspace,
// of a client, of a status (GET /admin/v1/grants), with the form that
// grants one.
func (s *Server) sharingPage(r *http.Request) (view, error) {
	q := r.URL.Query()
	gq := adminapi.GrantQuery{Workspace: q.Get("workspace"), Client: q.Get("client"), Status: q.Get("status"), Cursor: q.Get("cursor"), Limit: pageSize}
	p, err := s.api.ListGrants(r.Context(), gq)
	if err != nil {
		return view{}, err
	}
	sv := sharingView{Workspace: gq.Workspace, Client: gq.Client, Status: gq.Status, Statuses: adminapi.GrantStatuses, Grants: p.Items}
	if p.Next != "" {
		sv.Next = "/sharing?" + pageLink(q, p.Next)
	}
	return view{Template: "sharing", Title: "Sharing grants", Nav: "sharing", Data: sv}, nil
}

// grantSharing lets the form's client act in the form's workspace, and
// shows the sharing key once.
func (s *Server) grantSharing(r *http.Request) (view, error) {
	ws, client := r.PostFormValue("workspace"), r.PostFormValue("client")
	if ws == "" || client == "" {
		return view{}, invalid("Name the client and the workspace it may act in.")
	}
	g, err := s.api.CreateGrant(r.Context(), ws, client)
	if err != nil {
		return view{}, err
	}
	return view{Template: "secret", Title: "Sharing granted", Nav: "sharing", Data: secretView{Grant: &g}}, nil
}

// confirmSharingRevokePage asks the operator to confirm the revocation of
// the sharing grant of the path.
func (s *Server) confirmSharingRevokePage(r *http.Request) (view, error) {
	g, err := s.api.GetGrant(r.Context(), r.PathValue("id"))
	if err != nil {
		return view{}, err
	}
	if !g.RevokedAt.IsZero() {
		return view{}, invalid("This grant is revoked already.")
	}
	return confirmRevoke("revoke a sharing grant", "sharing", revokeView{
		Facts: []fact{{"Grant", g.GrantID}, {"Client", g.ClientID}, {"Workspace it may act in", g.WorkspaceID}, {"Granted", when(g.CreatedAt)}},
		Consequence: "Revoking the grant refuses the client's logins into " + g.WorkspaceID + " with its sharing key and their refresh tokens at once, " +
			"and their access tokens on every route within 2 seconds. Nothing undoes it; grant again for a new key.",
		Action: "/sharing/" + url.PathEscape(g.GrantID) + "/revoke", Button: "Revoke the grant", Cancel: "/clients/" + url.PathEscape(g.ClientID)}), nil
}

// revokeSharing revokes the sharing grant of the path, and goes to its
// client's page.
func (s *Server) revokeSharing(r *http.Request) (view, error) {
	g, err := s.api.RevokeGrant(r.Context(), r.PathValue("id"))
	if err != nil {
		return view{}, err
	}
	return view{Redirect: "/clients/" + url.PathEscape(g.ClientID)}, nil
}
