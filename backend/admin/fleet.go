package admin

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/fleet"
	"github.com/health-data-connect/hdc/backend/internal/web"
)

// WithFleet gives the service the fleet as the backend's settings bound
// its view (fleet.New); without it, the view forgets after
// fleet.DefaultForgetAfter.
func WithFleet(f *fleet.Service) Option { return func(s *Service) { s.fleet = f } }

// backendOut is b as the API shows it.
func backendOut(b fleet.Backend) adminapi.Backend {
	return adminapi.Backend{ID: b.ID, Host: b.Host, Version: b.Version, Address: b.Address, StartedAt: b.StartedAt,
		LastSeen: b.LastSeen, Current: b.Current, LeavesAt: b.LeavesAt}
}

// edgeOut is e as the API shows it.
func edgeOut(e fleet.Edge) adminapi.Edge {
	return adminapi.Edge{ID: e.ID, Name: e.Name, Serial: e.Serial, AppliedSeq: e.AppliedSeq, Lag: e.Lag,
		LastContact: e.LastContact, Source: e.Source, Current: e.Current, LeavesAt: e.LeavesAt}
}

// checkpointOut is c as the API shows it, nil for none.
func checkpointOut(c *trail.Checkpointed) *adminapi.Checkpoint {
	if c == nil {
		return nil
	}
	return &adminapi.Checkpoint{At: c.At, Where: c.Where}
}

// ListBackends returns a page of the backends that beat within the
// fleet's bound, by id: each one's host, version, address, start and last
// heartbeat, whether it is current, and when it leaves the view.
func (s *Service) ListBackends(ctx context.Context, q adminapi.PageQuery) (adminapi.Page[adminapi.Backend], error) {
	list, err := s.fleet.Backends(ctx)
	if err != nil {
		return adminapi.Page[adminapi.Backend]{}, err
	}
	return pageOf(mapped(list, backendOut), func(b adminapi.Backend) string { return b.ID }, q)
}

// ListEdges returns a page of the edges that reported within the fleet's
// bound, by id: each one's certificate, the key plane's change it
// applied, how far behind the newest that is, its last contact, and when
// it leaves the view.
func (s *Service) ListEdges(ctx context.Context, q adminapi.PageQuery) (adminapi.Page[adminapi.Edge], error) {
	list, err := s.fleet.Edges(ctx)
	if err != nil {
		return adminapi.Page[adminapi.Edge]{}, err
	}
	return pageOf(mapped(list, edgeOut), func(e adminapi.Edge) string { return e.ID }, q)
}

// FleetStatus returns the outbox's queue and the newest checkpoint.
func (s *Service) FleetStatus(ctx context.Context) (adminapi.FleetStatus, error) {
	st, err := s.st.OutboxStats(ctx)
	if err != nil {
		return adminapi.FleetStatus{}, err
	}
	out := adminapi.FleetStatus{Outbox: adminapi.OutboxStatus{Pending: st.Pending}}
	if !st.OldestPending.IsZero() {
		out.Outbox.OldestPendingAt = &st.OldestPending
	}
	if s.trail != nil {
		var c *trail.Checkpointed
		c, err = s.trail.LastCheckpoint(ctx)
		out.Checkpoint = checkpointOut(c)
	}
	return out, err
}

func (h *Handler) fleetStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := h.svc.FleetStatus(r.Context())
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, st)
	return nil
}

func (h *Handler) listBackends(w http.ResponseWriter, r *http.Request) error {
	return listed(w, r, h.svc.ListBackends)
}

func (h *Handler) listEdges(w http.ResponseWriter, r *http.Request) error {
	return listed(w, r, h.svc.ListEdges)
}
