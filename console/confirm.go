package console

import (
	"context"
	"net/http"
	"strconv"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// Every change that takes something away is asked first: a page, reached
// by GET, names what the change will do, and its form, confirmed by POST,
// makes it.

// confirmView is the confirmation of a change to a client: a rotation, a
// retirement or its disabling, with the keys it touches and their last
// use.
type confirmView struct {
	Client adminapi.Client
	Action string // "rotate", "retire" or "disable"
	Keys   []adminapi.KeyInfo
}

// confirmPage asks the operator to confirm, with each key's last use at
// any edge: a rotation (the client's active keys move to retiring), a
// retirement (of the kid the query names), or the client's disabling (its
// active and retiring keys stop opening requests); or the clearing of its
// limits, naming each.
func (s *Server) confirmPage(r *http.Request) (view, error) {
	id, q := r.PathValue("id"), r.URL.Query()
	cv := confirmView{Action: q.Get("action")}
	var err error
	switch cv.Action {
	case "rotate":
		cv.Keys, err = s.keysOf(r.Context(), id, clientkey.Active)
	case "retire":
		cv.Keys, err = s.keyOf(r.Context(), id, q.Get("kid"))
	case "disable":
		cv.Keys, err = s.keysOf(r.Context(), id, clientkey.Active, clientkey.Retiring)
	case "clear-limits":
		c, err := s.api.GetClient(r.Context(), id)
		if err != nil {
			return view{}, err
		}
		return s.confirmClearLimits(r, c)
	default:
		return view{}, invalid("action must be rotate, retire, disable or clear-limits.")
	}
	if err == nil {
		cv.Client, err = s.api.GetClient(r.Context(), id)
	}
	if err != nil {
		return view{}, err
	}
	return view{Template: "confirm", Title: "Confirm: " + cv.Action, Nav: "clients", Data: cv}, nil
}

// keysOf returns the keys of the client id in each of statuses, in that
// order.
func (s *Server) keysOf(ctx context.Context, id string, statuses ...clientkey.Status) ([]adminapi.KeyInfo, error) {
	var out []adminapi.KeyInfo
	for _, st := range statuses {
		p, err := s.api.ListKeys(ctx, adminapi.KeyQuery{Client: id, Status: st, Limit: adminapi.MaxLimit})
		if err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
	}
	return out, nil
}

// keyOf returns the key kid of the client id, refused when it is another
// client's.
func (s *Server) keyOf(ctx context.Context, id, kid string) ([]adminapi.KeyInfo, error) {
	k, err := s.api.GetKey(ctx, kid)
	if err != nil {
		return nil, err
	}
	if k.ClientID != id {
		return nil, invalid("The key is not this client's.")
	}
	return []adminapi.KeyInfo{k}, nil
}

// deleteView is the confirmation of a subscription's deletion: the
// deliveries still to be sent, which the deletion drops with the log.
type deleteView struct {
	Subscription adminapi.Subscription
	Waiting      []adminapi.Delivery
	More         bool // more wait than Waiting lists
}

// Count says how many deliveries wait: "1 delivery", "2 deliveries", or
// "more than 100 deliveries" when the page lists only some.
func (d deleteView) Count() string {
	n := strconv.Itoa(len(d.Waiting))
	switch {
	case d.More:
		return "more than " + n + " deliveries"
	case len(d.Waiting) == 1:
		return "1 delivery"
	}
	return n + " deliveries"
}

// waitingStatuses are the deliveries still to be sent: not tried yet, or
// failed with a retry scheduled.
var waitingStatuses = []string{"pending", "failed"}

// confirmDeletePage asks the operator to confirm a subscription's
// deletion (the query's action is delete), with the deliveries it drops.
func (s *Server) confirmDeletePage(r *http.Request) (view, error) {
	if a := r.URL.Query().Get("action"); a != "delete" {
		return view{}, invalid("action must be delete.")
	}
	id := r.PathValue("id")
	sub, err := s.api.GetSubscription(r.Context(), id)
	if err != nil {
		return view{}, err
	}
	dv := deleteView{Subscription: sub}
	for _, st := range waitingStatuses {
		p, err := s.api.ListDeliveries(r.Context(), id, adminapi.DeliveryQuery{Status: st, Limit: pageSize})
		if err != nil {
			return view{}, err
		}
		dv.Waiting = append(dv.Waiting, p.Deliveries...)
		dv.More = dv.More || p.Next != nil
	}
	return view{Template: "confirm-delete", Title: "Confirm: delete", Nav: "webhooks", Data: dv}, nil
}
