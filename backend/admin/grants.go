package admin

import (
	"context"
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// GrantQuery selects sharing grants: of a workspace, of a client, of a
// status, a page at a time in creation order.
type GrantQuery struct {
	Workspace string
	Client    string
	Status    store.GrantStatus
	Cursor    string
	Limit     int
}

// ParseGrantQuery reads a GrantQuery from the query of GET
// /admin/v1/grants: workspace, client, status (active, revoked), cursor,
// limit.
func ParseGrantQuery(q url.Values) (GrantQuery, error) {
	v, err := query(q, "workspace", "client", "status", "cursor", "limit")
	if err != nil {
		return GrantQuery{}, err
	}
	gq := GrantQuery{Workspace: v["workspace"], Client: v["client"], Status: store.GrantStatus(v["status"]), Cursor: v["cursor"]}
	if err := gq.check(); err != nil {
		return gq, err
	}
	gq.Limit, err = limitOf(v["limit"])
	return gq, err
}

// check refuses a query the list does not take, from the API or the
// command line alike.
func (q GrantQuery) check() error {
	switch {
	case q.Workspace != "" && !contract.ValidID(q.Workspace):
		return problem.New(400, problem.CodeInvalidRequest, "workspace is not a workspace id")
	case q.Client != "" && !contract.ValidID(q.Client):
		return problem.New(400, problem.CodeInvalidRequest, "client is not a client id")
	case q.Status != "" && q.Status != store.GrantActive && q.Status != store.GrantRevoked:
		return problem.New(400, problem.CodeInvalidRequest, "status must be active or revoked")
	}
	return checkLimit(q.Limit)
}

// Values returns q as query parameters, ParseGrantQuery's inverse.
func (q GrantQuery) Values() url.Values {
	return values("workspace", q.Workspace, "client", q.Client, "status", string(q.Status), "cursor", q.Cursor, "limit", limitValue(q.Limit))
}

// ListGrants returns a page of the sharing grants q selects, never their
// keys.
func (s *Service) ListGrants(ctx context.Context, q GrantQuery) (Page[identity.GrantInfo], error) {
	if err := q.check(); err != nil {
		return Page[identity.GrantInfo]{}, err
	}
	after, err := afterCursor(q.Cursor)
	if err != nil {
		return Page[identity.GrantInfo]{}, err
	}
	limit := sizeOf(q.Limit)
	list, err := s.identity.ListGrants(ctx, store.GrantFilter{WorkspaceID: q.Workspace, ClientID: q.Client, Status: q.Status,
		After: after, Limit: limit})
	return keysetPage(list, limit, func(g identity.GrantInfo) store.Cursor {
		return store.Cursor{CreatedAt: g.CreatedAt, ID: g.GrantID}
	}), err
}

// GetGrant returns the sharing grant id, without its key.
func (s *Service) GetGrant(ctx context.Context, id string) (identity.GrantInfo, error) {
	return s.identity.GetGrant(ctx, id)
}

// CreateGrant lets client act in workspace (both exist, and the workspace
// is not the client's own) and returns the grant with its sharing key,
// shown once.
func (s *Service) CreateGrant(ctx context.Context, workspace, client string) (identity.Grant, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return identity.Grant{}, err
	}
	return s.identity.GrantSharing(ctx, by, workspace, client)
}

// RevokeGrant revokes the sharing grant id (a revoked one keeps its first
// revocation) and returns it as it is now.
func (s *Service) RevokeGrant(ctx context.Context, id string) (identity.GrantInfo, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return identity.GrantInfo{}, err
	}
	if err := s.identity.RevokeSharing(ctx, by, id); err != nil {
		return identity.GrantInfo{}, err
	}
	return s.GetGrant(ctx, id)
}

// createGrantRequest is the body of POST /admin/v1/grants.
type createGrantRequest struct {
	WorkspaceID string `json:"workspace_id"`
	ClientID    string `json:"client_id"`
}

func (h *Handler) createGrant(w http.ResponseWriter, r *http.Request) error {
	return created(w, r, func(ctx context.Context, b createGrantRequest) (identity.Grant, error) {
		return h.svc.CreateGrant(ctx, b.WorkspaceID, b.ClientID)
	})
}

func (h *Handler) listGrants(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, ParseGrantQuery, h.svc.ListGrants)
}

func (h *Handler) getGrant(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.GetGrant)
}

func (h *Handler) revokeGrant(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.RevokeGrant)
}
