package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

// workspaceRoutes are the workspaces' pages and the changes of their
// private webhook receivers.
func (s *Server) workspaceRoutes(page func(string, pageFunc) route, change func(string, changeFunc) route) []route {
	return []route{
		page("GET /workspaces", s.workspacesPage),
		page("GET /workspaces/{id}", s.workspacePage),
		page("GET /workspaces/{id}/destinations/{grant}/confirm", s.confirmDestinationRevokePage),
		change("POST /workspaces/{id}/destinations", s.grantDestination),
		change("POST /workspaces/{id}/destinations/{grant}/revoke", s.revokeDestination),
	}
}

// workspacesView is a page of workspaces and the link to the next.
type workspacesView struct {
	Workspaces []adminapi.Workspace
	Next       string
}

// workspacesPage lists the workspaces a page at a time, by id.
func (s *Server) workspacesPage(r *http.Request) (view, error) {
	q := r.URL.Query()
	p, err := s.api.ListWorkspaces(r.Context(), adminapi.PageQuery{Cursor: q.Get("cursor"), Limit: pageSize})
	if err != nil {
		return view{}, err
	}
	wv := workspacesView{Workspaces: p.Items}
	if p.Next != "" {
		wv.Next = "/workspaces?" + pageLink(q, p.Next)
	}
	return view{Template: "workspaces", Title: "Workspaces", Nav: "workspaces", Data: wv}, nil
}

// workspaceView is a workspace's page: the workspace, and the private
// webhook receivers granted to it, in force or revoked.
type workspaceView struct {
	Workspace    adminapi.Workspace
	Destinations []adminapi.Destination
}

// workspacePage shows a workspace with its private webhook receivers
// (GET /admin/v1/workspaces/{id}/webhook-destinations) and the form that
// grants one.
func (s *Server) workspacePage(r *http.Request) (view, error) {
	id := r.PathValue("id")
	ws, err := s.api.GetWorkspace(r.Context(), id)
	if err != nil {
		return view{}, err
	}
	ds, err := adminapi.All(r.Context(), func(ctx context.Context, cursor string) (adminapi.Page[adminapi.Destination], error) {
		return s.api.ListDestinations(ctx, id, adminapi.PageQuery{Cursor: cursor, Limit: adminapi.MaxLimit})
	})
	if err != nil {
		return view{}, err
	}
	return view{Template: "workspace", Title: "Workspace " + ws.ID, Nav: "workspaces", Data: workspaceView{Workspace: ws, Destinations: ds}}, nil
}

// grantDestination grants the workspace of the path the form's private
// receiver: an address or a network, and a port (empty: every port).
func (s *Server) grantDestination(r *http.Request) (view, error) {
	req := adminapi.DestinationRequest{Prefix: strings.TrimSpace(r.PostFormValue("prefix"))}
	if p := strings.TrimSpace(r.PostFormValue("port")); p != "" {
		port, err := strconv.Atoi(p)
		if err != nil {
			return view{}, invalid("The port is a number from 1 to 65535, or empty for every port.")
		}
		req.Port = &port
	}
	id := r.PathValue("id")
	if _, err := s.api.GrantDestination(r.Context(), id, req); err != nil {
		return view{}, err
	}
	return view{Redirect: "/workspaces/" + url.PathEscape(id)}, nil
}

// destinationOf returns the grant of the workspace of the path that the
// path names.
func (s *Server) destinationOf(r *http.Request) (adminapi.Destination, error) {
	id, grant := r.PathValue("id"), r.PathValue("grant")
	ds, err := adminapi.All(r.Context(), func(ctx context.Context, cursor string) (adminapi.Page[adminapi.Destination], error) {
		return s.api.ListDestinations(ctx, id, adminapi.PageQuery{Cursor: cursor, Limit: adminapi.MaxLimit})
	})
	for _, d := range ds {
		if d.ID == grant {
			return d, err
		}
	}
	if err == nil {
		err = errNoPage
	}
	return adminapi.Destination{}, err
}

// confirmDestinationRevokePage asks the operator to confirm the
// revocation of a private receiver granted to the workspace of the path.
func (s *Server) confirmDestinationRevokePage(r *http.Request) (view, error) {
	d, err := s.destinationOf(r)
	if err != nil {
		return view{}, err
	}
	if d.RevokedAt != nil {
		return view{}, invalid("This grant is revoked already.")
	}
	port := "every port"
	if d.Port != nil {
		port = strconv.Itoa(*d.Port)
	}
	ws := url.PathEscape(d.WorkspaceID)
	return confirmRevoke("revoke a webhook destination", "workspaces", revokeView{
		Facts: []fact{{"Workspace", d.WorkspaceID}, {"Addresses", d.Prefix}, {"Port", port}, {"Granted", when(d.CreatedAt) + " by " + d.CreatedBy}},
		Consequence: "The workspace's webhooks can no longer reach these addresses: on every backend within 2 seconds, deliveries to them " +
			"are refused as any private address's, and a subscription naming them can no longer be registered.",
		Action: "/workspaces/" + ws + "/destinations/" + url.PathEscape(d.ID) + "/revoke", Button: "Revoke the destination",
		Cancel: "/workspaces/" + ws}), nil
}

// revokeDestination revokes the grant of the path, and goes back to its
// workspace.
func (s *Server) revokeDestination(r *http.Request) (view, error) {
	id := r.PathValue("id")
	if _, err := s.api.RevokeDestination(r.Context(), id, r.PathValue("grant")); err != nil {
		return view{}, err
	}
	return view{Redirect: "/workspaces/" + url.PathEscape(id)}, nil
}
