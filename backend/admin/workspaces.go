package admin

import (
	"context"
	"net/http"
	"time"
)

// Workspace is a tenant as the API shows one.
type Workspace struct {
	ID        string    `json:"workspace_id"`
	CreatedAt time.Time `json:"created_at"`
}

// ListWorkspaces returns a page of the workspaces, in id order.
func (s *Service) ListWorkspaces(ctx context.Context, q PageQuery) (Page[Workspace], error) {
	var after string
	if err := decodeCursor(q.Cursor, &after); err != nil {
		return Page[Workspace]{}, err
	}
	list, err := s.st.ListWorkspaces(ctx, after, q.size())
	if err != nil {
		return Page[Workspace]{}, err
	}
	p := Page[Workspace]{Items: make([]Workspace, 0, len(list))}
	for _, w := range list {
		p.Items = append(p.Items, Workspace{ID: w.ID, CreatedAt: w.CreatedAt})
	}
	if len(list) == q.size() {
		p.Next = encodeCursor(list[len(list)-1].ID)
	}
	return p, nil
}

// GetWorkspace returns the workspace id.
func (s *Service) GetWorkspace(ctx context.Context, id string) (Workspace, error) {
	w, err := s.st.GetWorkspace(ctx, id)
	return Workspace{ID: w.ID, CreatedAt: w.CreatedAt}, err
}

func (h *Handler) listWorkspaces(w http.ResponseWriter, r *http.Request) error {
	return listed(w, r, h.svc.ListWorkspaces)
}

func (h *Handler) getWorkspace(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.GetWorkspace)
}
