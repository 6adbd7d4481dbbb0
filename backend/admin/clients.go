package admin

import (
	"context"
	"errors"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// clientOut is c as the API shows it.
func clientOut(c identity.Client) adminapi.Client {
	return adminapi.Client{ClientID: c.ClientID, WorkspaceID: c.WorkspaceID, Status: string(c.Status), CreatedAt: c.CreatedAt,
		Name: c.Name, Labels: c.Labels}
}

// credentialsOut is c as the API shows it.
func credentialsOut(c identity.Credentials) adminapi.Credentials {
	return adminapi.Credentials{ClientID: c.ClientID, ClientSecret: c.ClientSecret, WorkspaceID: c.WorkspaceID}
}

// CreateClient creates a client of r's workspace (and the workspace when
// it does not exist), with r's name and labels, and returns its
// credentials, the secret shown once.
func (s *Service) CreateClient(ctx context.Context, r adminapi.CreateClientRequest) (adminapi.Credentials, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.Credentials{}, err
	}
	c, err := s.identity.CreateClient(ctx, by, r.WorkspaceID, identity.Meta{Name: r.Name, Labels: r.Labels})
	return credentialsOut(c), metaProblem(err)
}

// UpdateClient changes the client id's name and labels as r says and
// returns it as it is then; the audit record (client_update) names the
// person and every field it moved, before and after.
func (s *Service) UpdateClient(ctx context.Context, id string, r adminapi.UpdateClientRequest) (adminapi.Client, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.Client{}, err
	}
	c, err := s.identity.UpdateClient(ctx, by, id, identity.Update{Name: r.Name, SetLabels: r.Labels, RemoveLabels: r.RemoveLabels})
	return clientOut(c), metaProblem(err)
}

// metaProblem returns err, a name or label refused, as its problem.
func metaProblem(err error) error {
	var bad *identity.InvalidMetaError
	switch {
	case errors.As(err, &bad) && bad.Label:
		return problem.New(http.StatusBadRequest, problem.CodeInvalidLabel, bad.Error())
	case errors.As(err, &bad):
		return problem.New(http.StatusBadRequest, problem.CodeInvalidName, bad.Error())
	}
	return err
}

// ListClients returns a page of the clients q selects: in creation order,
// or in name order with a name prefix.
func (s *Service) ListClients(ctx context.Context, q adminapi.ClientQuery) (adminapi.Page[adminapi.Client], error) {
	if err := q.Check(); err != nil {
		return adminapi.Page[adminapi.Client]{}, err
	}
	var after clientCursor
	if err := decodeCursor(q.Cursor, &after); err != nil {
		return adminapi.Page[adminapi.Client]{}, err
	}
	f := store.ClientFilter{WorkspaceID: q.Workspace, Status: store.ClientStatus(q.Status), NamePrefix: q.NamePrefix,
		After: store.ClientCursor(after), Limit: sizeOf(q.Limit)}
	for _, l := range q.Labels {
		k, v, _ := contract.ParseLabel(l) // checked
		f.Labels = append(f.Labels, store.Label{Key: k, Value: v})
	}
	list, err := s.identity.ListClients(ctx, f)
	p := adminapi.Page[adminapi.Client]{Items: mapped(list, clientOut)}
	if len(list) == f.Limit {
		last := list[len(list)-1]
		next := clientCursor{CreatedAt: last.CreatedAt, ID: last.ClientID}
		if q.NamePrefix != "" {
			next.Name = contract.FoldName(last.Name)
		}
		p.Next = encodeCursor(next)
	}
	return p, err
}

// GetClient returns the client id, without its secret.
func (s *Service) GetClient(ctx context.Context, id string) (adminapi.Client, error) {
	c, err := s.st.GetClient(ctx, id)
	if err != nil {
		return adminapi.Client{}, err
	}
	return clientOut(identity.Client{ClientID: c.ID, WorkspaceID: c.WorkspaceID, Status: c.Status, CreatedAt: c.CreatedAt,
		Name: c.Name, Labels: c.Labels}), nil
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
	return created(w, r, h.svc.CreateClient)
}

func (h *Handler) updateClient(w http.ResponseWriter, r *http.Request) error {
	return keyChange(w, r, r.PathValue("id"), contract.ValidID, h.svc.UpdateClient,
		func(adminapi.Client) int { return http.StatusOK })
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
