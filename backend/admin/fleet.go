package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/fleet"
	"github.com/health-data-connect/hdc/backend/internal/web"
)

// WithFleet gives the service the fleet as the backend's settings bound
// its view (fleet.New); without it, the view forgets after
// fleet.DefaultForgetAfter.
func WithFleet(f *fleet.Service) Option { return func(s *Service) { s.fleet = f } }

// ListBackends returns a page of the backends that beat within the
// fleet's bound, by id: each one's host, version, address, start and last
// heartbeat, whether it is current, and when it leaves the view.
func (s *Service) ListBackends(ctx context.Context, q PageQuery) (Page[fleet.Backend], error) {
	list, err := s.fleet.Backends(ctx)
	if err != nil {
		return Page[fleet.Backend]{}, err
	}
	return pageOf(list, func(b fleet.Backend) string { return b.ID }, q)
}

// ListEdges returns a page of the edges that reported within the fleet's
// bound, by id: each one's certificate, the key plane's change it
// applied, how far behind the newest that is, its last contact, and when
// it leaves the view.
func (s *Service) ListEdges(ctx context.Context, q PageQuery) (Page[fleet.Edge], error) {
	list, err := s.fleet.Edges(ctx)
	if err != nil {
		return Page[fleet.Edge]{}, err
	}
	return pageOf(list, func(e fleet.Edge) string { return e.ID }, q)
}

// FleetStatus is what the alert rules watch besides the backends and the
// edges: the webhook outbox's depth and its oldest pending delivery, and
// the newest audit checkpoint.
type FleetStatus struct {
	Outbox OutboxStatus `json:"outbox"`
	// Checkpoint is the newest audit checkpoint, null when the backends
	// write none to a bucket, or none yet.
	Checkpoint *trail.Checkpointed `json:"checkpoint"`
}

// OutboxStatus is the webhook outbox's queue: the pending deliveries of
// active subscriptions, and when the oldest was created (null for none).
type OutboxStatus struct {
	Pending         int64      `json:"pending"`
	OldestPendingAt *time.Time `json:"oldest_pending_at"`
}

// FleetStatus returns the outbox's queue and the newest checkpoint.
func (s *Service) FleetStatus(ctx context.Context) (FleetStatus, error) {
	st, err := s.st.OutboxStats(ctx)
	if err != nil {
		return FleetStatus{}, err
	}
	out := FleetStatus{Outbox: OutboxStatus{Pending: st.Pending}}
	if !st.OldestPending.IsZero() {
		out.Outbox.OldestPendingAt = &st.OldestPending
	}
	if s.trail != nil {
		out.Checkpoint, err = s.trail.LastCheckpoint(ctx)
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
