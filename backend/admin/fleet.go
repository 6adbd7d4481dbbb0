package admin

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/fleet"
)

// ListBackends returns a page of the backends that beat within a day, by
// id: each one's host, version, address, start and last heartbeat, and
// whether it is current.
func (s *Service) ListBackends(ctx context.Context, q PageQuery) (Page[fleet.Backend], error) {
	list, err := s.fleet.Backends(ctx)
	if err != nil {
		return Page[fleet.Backend]{}, err
	}
	return pageOf(list, func(b fleet.Backend) string { return b.ID }, q)
}

// ListEdges returns a page of the edges that reported within a day, by
// id: each one's certificate, the key plane's change it applied, how far
// behind the newest that is, and its last contact.
func (s *Service) ListEdges(ctx context.Context, q PageQuery) (Page[fleet.Edge], error) {
	list, err := s.fleet.Edges(ctx)
	if err != nil {
		return Page[fleet.Edge]{}, err
	}
	return pageOf(list, func(e fleet.Edge) string { return e.ID }, q)
}

func (h *Handler) listBackends(w http.ResponseWriter, r *http.Request) error {
	return listed(w, r, h.svc.ListBackends)
}

func (h *Handler) listEdges(w http.ResponseWriter, r *http.Request) error {
	return listed(w, r, h.svc.ListEdges)
}
