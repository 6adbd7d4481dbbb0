package admin

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// ClientLimits returns the client id's overrides of the edges' default
// limits: none (empty limits) when it has none.
func (s *Service) ClientLimits(ctx context.Context, id string) (contract.ClientLimits, error) {
	if _, err := s.st.GetClient(ctx, id); err != nil {
		return contract.ClientLimits{}, err
	}
	l, _, err := s.st.ClientLimits(ctx, id)
	return contract.ClientLimits{ClientID: id, Limits: l}, err
}

// SetClientLimits makes l the client id's overrides, which every edge
// enforces within a second (the key plane's change feed); the audit
// record (client_limits_set) names the person and the limits before and
// after. Empty l clears them.
func (s *Service) SetClientLimits(ctx context.Context, id string, l contract.Limits) (contract.ClientLimits, error) {
	if err := l.Check(); err != nil {
		return contract.ClientLimits{}, problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, err.Error())
	}
	return s.changeLimits(ctx, id, l, audit.ClientLimitsSet)
}

// ClearClientLimits removes the client id's overrides: the edges'
// defaults apply to it again. The audit record (client_limits_clear)
// names the person and the limits it removed.
func (s *Service) ClearClientLimits(ctx context.Context, id string) (contract.ClientLimits, error) {
	return s.changeLimits(ctx, id, contract.Limits{}, audit.ClientLimitsClear)
}

// changeLimits makes l the client id's overrides, recorded as action.
func (s *Service) changeLimits(ctx context.Context, id string, l contract.Limits, action audit.Action) (contract.ClientLimits, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return contract.ClientLimits{}, err
	}
	c, err := s.st.GetClient(ctx, id)
	if err != nil {
		return contract.ClientLimits{}, err
	}
	e := audit.Event{At: s.now(), Action: action, Outcome: audit.Success, Workspace: c.WorkspaceID,
		Person: by, Entity: audit.Entity{Kind: audit.EntityClient, ID: id}}
	if err := s.st.SetClientLimits(ctx, id, l, e); err != nil {
		return contract.ClientLimits{}, err
	}
	return contract.ClientLimits{ClientID: id, Limits: l}, nil
}

func (h *Handler) getClientLimits(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.ClientLimits)
}

func (h *Handler) setClientLimits(w http.ResponseWriter, r *http.Request) error {
	return keyChange(w, r, r.PathValue("id"), contract.ValidID, h.svc.SetClientLimits,
		func(contract.ClientLimits) int { return http.StatusOK })
}

func (h *Handler) clearClientLimits(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.ClearClientLimits)
}
