package console

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

// fleetView is the fleet page: the backends with their readiness (a
// current heartbeat), the edges following the key plane with their lag,
// the webhook outbox's queue and the newest audit checkpoint.
type fleetView struct {
	Backends []adminapi.Backend
	Edges    []adminapi.Edge
	Ready    int
	Behind   int
	Status   adminapi.FleetStatus
}

// fleetPage shows the fleet as GET /admin/v1/fleet/backends,
// /fleet/edges and /fleet/status give it.
func (s *Server) fleetPage(r *http.Request) (view, error) {
	ctx := r.Context()
	bs, err := adminapi.All(ctx, func(ctx2 context.Context, cursor string) (adminapi.Page[adminapi.Backend], error) {
		return s.api.ListBackends(ctx2, adminapi.PageQuery{Cursor: cursor, Limit: adminapi.MaxLimit})
	})
	if err != nil {
		return view{}, err
	}
	es, err := adminapi.All(ctx, func(ctx2 context.Context, cursor string) (adminapi.Page[adminapi.Edge], error) {
		return s.api.ListEdges(ctx2, adminapi.PageQuery{Cursor: cursor, Limit: adminapi.MaxLimit})
	})
	if err != nil {
		return view{}, err
	}
	st, err := s.api.FleetStatus(ctx)
	if err != nil {
		return view{}, err
	}
	fv := fleetView{Backends: bs, Edges: es, Status: st}
	for _, b := range bs {
		if b.Current {
			fv.Ready++
		}
	}
	for _, e := range es {
		if e.Lag > 0 || !e.Current {
			fv.Behind++
		}
	}
	return view{Template: "fleet", Title: "Fleet", Nav: "fleet", Data: fv}, nil
}
