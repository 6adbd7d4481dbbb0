package admin

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// ClientQuery selects clients: of a workspace, of a status, a page at a
// time in creation order.
type ClientQuery struct {
	Workspace string
	Status    store.ClientStatus
	Cursor    string
	Limit     int
}

// ParseClientQuery reads a ClientQuery from the query of GET
// /admin/v1/clients: workspace, status (active, disabled), cursor, limit.
func ParseClientQuery(q url.Values) (ClientQuery, error) {
	v, err := query(q, "workspace", "status", "cursor", "limit")
	if err != nil {
		return ClientQuery{}, err
	}
	cq := ClientQuery{Workspace: v["workspace"], Status: store.ClientStatus(v["status"]), Cursor: v["cursor"]}
	if err := cq.check(); err != nil {
		return cq, err
	}
	cq.Limit, err = limitOf(v["limit"])
	return cq, err
}

// check refuses a filter no client can match: a workspace that is not a
// workspace id, a status that is not one.
func (q ClientQuery) check() error {
	if q.Workspace != "" && !contract.ValidID(q.Workspace) {
		return problem.New(400, problem.CodeInvalidRequest, "workspace is not a workspace id")
	}
	if q.Status != "" && q.Status != store.ClientActive && q.Status != store.ClientDisabled {
		return problem.New(400, problem.CodeInvalidRequest, "status must be active or disabled")
	}
	return nil
}

// Values returns q as query parameters, ParseClientQuery's inverse.
func (q ClientQuery) Values() url.Values {
	return values("workspace", q.Workspace, "status", string(q.Status), "cursor", q.Cursor, "limit", limitValue(q.Limit))
}

// clientCursor is the position a page of clients ends at.
type clientCursor struct {
	CreatedAt time.Time `json:"t"`
	ID        string    `json:"id"`
}

// CreateClient creates a client of workspace (and the workspace when it
// does not exist) and returns its credentials, the secret shown once.
func (s *Service) CreateClient(ctx context.Context, workspace string) (identity.Credentials, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return identity.Credentials{}, err
	}
	return s.identity.CreateClient(ctx, by, workspace)
}

// ListClients returns a page of the clients q selects.
func (s *Service) ListClients(ctx context.Context, q ClientQuery) (Page[identity.Client], error) {
	if err := q.check(); err != nil {
		return Page[identity.Client]{}, err
	}
	after, err := afterCursor(q.Cursor)
	if err != nil {
		return Page[identity.Client]{}, err
	}
	limit := sizeOf(q.Limit)
	list, err := s.identity.ListClients(ctx, store.ClientFilter{WorkspaceID: q.Workspace, Status: q.Status, After: after, Limit: limit})
	return keysetPage(list, limit, func(c identity.Client) store.Cursor {
		return store.Cursor{CreatedAt: c.CreatedAt, ID: c.ClientID}
	}), err
}

// GetClient returns the client id, without its secret.
func (s *Service) GetClient(ctx context.Context, id string) (identity.Client, error) {
	c, err := s.st.GetClient(ctx, id)
	if err != nil {
		return identity.Client{}, err
	}
	return identity.Client{ClientID: c.ID, WorkspaceID: c.WorkspaceID, Status: c.Status, CreatedAt: c.CreatedAt}, nil
}

// DisableClient stops the client id from logging in and refreshing, and
// returns it as it is now.
func (s *Service) DisableClient(ctx context.Context, id string) (identity.Client, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return identity.Client{}, err
	}
	if err := s.identity.DisableClient(ctx, by, id); err != nil {
		return identity.Client{}, err
	}
	return s.GetClient(ctx, id)
}

// createClientRequest is the body of POST /admin/v1/clients.
type createClientRequest struct {
	WorkspaceID string `json:"workspace_id"`
}

func (h *Handler) createClient(w http.ResponseWriter, r *http.Request) error {
	return created(w, r, func(ctx context.Context, b createClientRequest) (identity.Credentials, error) {
		return h.svc.CreateClient(ctx, b.WorkspaceID)
	})
}

func (h *Handler) listClients(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, ParseClientQuery, h.svc.ListClients)
}

func (h *Handler) getClient(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.GetClient)
}

func (h *Handler) disableClient(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.DisableClient)
}
