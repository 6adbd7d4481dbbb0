package admin

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/store"
)

// workspaceOut is w as the API shows it.
func workspaceOut(w store.Workspace) adminapi.Workspace {
	return adminapi.Workspace{ID: w.ID, CreatedAt: w.CreatedAt}
}

// ListWorkspaces returns a page of the workspaces, in id order.
func (s *Service) ListWorkspaces(ctx context.Context, q adminapi.PageQuery) (adminapi.Page[adminapi.Workspace], error) {
	var after string
	if err := q.Check(); err != nil {
		return adminapi.Page[adminapi.Workspace]{}, err
	}
	if err := decodeCursor(q.Cursor, &after); err != nil {
		return adminapi.Page[adminapi.Workspace]{}, err
	}
	list, err := s.st.ListWorkspaces(ctx, after, q.Size())
	if err != nil {
		return adminapi.Page[adminapi.Workspace]{}, err
	}
	p := adminapi.Page[adminapi.Workspace]{Items: mapped(list, workspaceOut)}
	if len(list) == q.Size() {
		p.Next = encodeCursor(list[len(list)-1].ID)
	}
	return p, nil
}

// GetWorkspace returns the workspace id.
func (s *Service) GetWorkspace(ctx context.Context, id string) (adminapi.Workspace, error) {
	w, err := s.st.GetWorkspace(ctx, id)
	return workspaceOut(w), err
}

func (h *Handler) listWorkspaces(w http.ResponseWriter, r *http.Request) error {
	return listed(w, r, h.svc.ListWorkspaces)
}

func (h *Handler) getWorkspace(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.GetWorkspace)
}
