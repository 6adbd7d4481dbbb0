package admin

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/store"
)

// grantOut is g as the API lists it.
func grantOut(g identity.GrantInfo) adminapi.Grant {
	return adminapi.Grant{GrantID: g.GrantID, WorkspaceID: g.WorkspaceID, ClientID: g.ClientID, CreatedAt: g.CreatedAt, RevokedAt: g.RevokedAt}
}

// issuedGrantOut is g as the answer that makes it shows it, its key
// included.
func issuedGrantOut(g identity.Grant) adminapi.IssuedGrant {
	return adminapi.IssuedGrant{GrantID: g.GrantID, SharingKey: g.SharingKey, WorkspaceID: g.WorkspaceID, ClientID: g.ClientID}
}

// ListGrants returns a page of the sharing grants q selects, never their
// keys.
func (s *Service) ListGrants(ctx context.Context, q adminapi.GrantQuery) (adminapi.Page[adminapi.Grant], error) {
	if err := q.Check(); err != nil {
		return adminapi.Page[adminapi.Grant]{}, err
	}
	after, err := afterCursor(q.Cursor)
	if err != nil {
		return adminapi.Page[adminapi.Grant]{}, err
	}
	limit := sizeOf(q.Limit)
	list, err := s.identity.ListGrants(ctx, store.GrantFilter{WorkspaceID: q.Workspace, ClientID: q.Client, Status: store.GrantStatus(q.Status),
		After: after, Limit: limit})
	return keysetPage(mapped(list, grantOut), limit, func(g adminapi.Grant) store.Cursor {
		return store.Cursor{CreatedAt: g.CreatedAt, ID: g.GrantID}
	}), err
}

// GetGrant returns the sharing grant id, without its key.
func (s *Service) GetGrant(ctx context.Context, id string) (adminapi.Grant, error) {
	g, err := s.identity.GetGrant(ctx, id)
	return grantOut(g), err
}

// CreateGrant lets client act in workspace (both exist, and the workspace
// is not the client's own) and returns the grant with its sharing key,
// shown once.
func (s *Service) CreateGrant(ctx context.Context, workspace, client string) (adminapi.IssuedGrant, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.IssuedGrant{}, err
	}
	g, err := s.identity.GrantSharing(ctx, by, workspace, client)
	return issuedGrantOut(g), err
}

// RevokeGrant revokes the sharing grant id (a revoked one keeps its first
// revocation) and returns it as it is now.
func (s *Service) RevokeGrant(ctx context.Context, id string) (adminapi.Grant, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.Grant{}, err
	}
	if err := s.identity.RevokeSharing(ctx, by, id); err != nil {
		return adminapi.Grant{}, err
	}
	return s.GetGrant(ctx, id)
}

func (h *Handler) createGrant(w http.ResponseWriter, r *http.Request) error {
	return created(w, r, func(ctx context.Context, b adminapi.CreateGrantRequest) (adminapi.IssuedGrant, error) {
		return h.svc.CreateGrant(ctx, b.WorkspaceID, b.ClientID)
	})
}

func (h *Handler) listGrants(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, adminapi.ParseGrantQuery, h.svc.ListGrants)
}

func (h *Handler) getGrant(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.GetGrant)
}

func (h *Handler) revokeGrant(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.RevokeGrant)
}
