package admin

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/store"
)

// clientOut is c as the API shows it.
func clientOut(c identity.Client) adminapi.Client {
	return adminapi.Client{ClientID: c.ClientID, WorkspaceID: c.WorkspaceID, Status: string(c.Status), CreatedAt: c.CreatedAt}
}

// credentialsOut is c as the API shows it.
func credentialsOut(c identity.Credentials) adminapi.Credentials {
	return adminapi.Credentials{ClientID: c.ClientID, ClientSecret: c.ClientSecret, WorkspaceID: c.WorkspaceID}
}

// CreateClient creates a client of workspace (and the workspace when it
// does not exist) and returns its credentials, the secret shown once.
func (s *Service) CreateClient(ctx context.Context, workspace string) (adminapi.Credentials, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.Credentials{}, err
	}
	c, err := s.identity.CreateClient(ctx, by, workspace)
	return credentialsOut(c), err
}

// ListClients returns a page of the clients q selects.
func (s *Service) ListClients(ctx context.Context, q adminapi.ClientQuery) (adminapi.Page[adminapi.Client], error) {
	if err := q.Check(); err != nil {
		return adminapi.Page[adminapi.Client]{}, err
	}
	after, err := afterCursor(q.Cursor)
	if err != nil {
		return adminapi.Page[adminapi.Client]{}, err
	}
	limit := sizeOf(q.Limit)
	list, err := s.identity.ListClients(ctx, store.ClientFilter{WorkspaceID: q.Workspace, Status: store.ClientStatus(q.Status), After: store.ClientCursor{CreatedAt: after.CreatedAt, ID: after.ID}, Limit: limit})
	return keysetPage(mapped(list, clientOut), limit, func(c adminapi.Client) store.Cursor {
		return store.Cursor{CreatedAt: c.CreatedAt, ID: c.ClientID}
	}), err
}

// GetClient returns the client id, without its secret.
func (s *Service) GetClient(ctx context.Context, id string) (adminapi.Client, error) {
	c, err := s.st.GetClient(ctx, id)
	if err != nil {
		return adminapi.Client{}, err
	}
	return clientOut(identity.Client{ClientID: c.ID, WorkspaceID: c.WorkspaceID, Status: c.Status, CreatedAt: c.CreatedAt}), nil
}

// DisableClient stops the client id from logging in and refreshing, and
// returns it as it is now.
func (s *Service) DisableClient(ctx context.Context, id string) (adminapi.Client, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.Client{}, err
	}
	if err := s.identity.DisableClient(ctx, by, id); err != nil {
		return adminapi.Client{}, err
	}
	return s.GetClient(ctx, id)
}

func (h *Handler) createClient(w http.ResponseWriter, r *http.Request) error {
	return created(w, r, func(ctx context.Context, b adminapi.CreateClientRequest) (adminapi.Credentials, error) {
		return h.svc.CreateClient(ctx, b.WorkspaceID)
	})
}

func (h *Handler) listClients(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, adminapi.ParseClientQuery, h.svc.ListClients)
}

func (h *Handler) getClient(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.GetClient)
}

func (h *Handler) disableClient(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.DisableClient)
}
