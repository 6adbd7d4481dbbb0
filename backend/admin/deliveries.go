package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// errDisabled refuses to redeliver to a disabled subscription: what is
// made due would not be sent.
var errDisabled = problem.New(http.StatusConflict, problem.CodeConflict,
	"the subscription is disabled: nothing is sent to it until its client enables it")

// ParseDeliveryQuery reads the query of GET
// /admin/v1/subscriptions/{id}/deliveries, as a client's delivery log
// takes it (webhook.ParseDeliveryQuery): cursor, limit, status,
// event_type, since, until.
func ParseDeliveryQuery(q url.Values) (store.DeliveryFilter, error) {
	f, err := webhook.ParseDeliveryQuery(q)
	if err != nil {
		return f, problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, err.Error())
	}
	return f, nil
}

// ListDeliveries returns a page of the delivery log of the webhook
// subscription id, of whatever workspace: the deliveries f selects (its
// workspace and subscription are id's).
func (s *Service) ListDeliveries(ctx context.Context, id string, f store.DeliveryFilter) (webhook.DeliveryPage, error) {
	sub, err := s.st.GetSubscription(ctx, "", id)
	if err != nil {
		return webhook.DeliveryPage{}, err
	}
	f.WorkspaceID, f.SubscriptionID = sub.WorkspaceID, sub.ID
	return s.log.List(ctx, f)
}

// GetDelivery returns one delivery of the subscription id with its
// attempts.
func (s *Service) GetDelivery(ctx context.Context, id, deliveryID string) (webhook.DeliveryDetail, error) {
	sub, err := s.st.GetSubscription(ctx, "", id)
	if err != nil {
		return webhook.DeliveryDetail{}, err
	}
	return s.log.Get(ctx, sub.WorkspaceID, sub.ID, deliveryID)
}

// Redeliver sends one delivery of the subscription id again, with its
// webhook-id; the audit record names the person.
func (s *Service) Redeliver(ctx context.Context, id, deliveryID string) (webhook.Delivery, error) {
	sub, e, err := s.subscriptionChange(ctx, id)
	if err != nil {
		return webhook.Delivery{}, err
	}
	d, err := s.log.Redeliver(ctx, sub.WorkspaceID, sub.ID, deliveryID, e)
	return d, disabledOr(err)
}

// RecoverDeliveries sends again every delivery of the subscription id
// that failed or was given up since since, in creation order, and says
// how many; the audit record names the person.
func (s *Service) RecoverDeliveries(ctx context.Context, id string, since time.Time) (webhook.Recovered, error) {
	sub, e, err := s.subscriptionChange(ctx, id)
	if err != nil {
		return webhook.Recovered{}, err
	}
	n, err := s.log.Recover(ctx, sub.WorkspaceID, sub.ID, since, e)
	return n, disabledOr(err)
}

// subscriptionChange returns the subscription id and the event of a
// change to it by the person ctx acts for.
func (s *Service) subscriptionChange(ctx context.Context, id string) (store.Subscription, audit.Event, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return store.Subscription{}, audit.Event{}, err
	}
	sub, err := s.st.GetSubscription(ctx, "", id)
	return sub, audit.Event{Workspace: sub.WorkspaceID, Person: by}, err
}

// disabledOr is err, with the store's conflict said as errDisabled.
func disabledOr(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return errDisabled
	}
	return err
}

func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	f, err := ParseDeliveryQuery(r.URL.Query())
	if err != nil {
		return err
	}
	return byID(w, r, func(ctx context.Context, id string) (webhook.DeliveryPage, error) {
		return h.svc.ListDeliveries(ctx, id, f)
	})
}

func (h *Handler) getDelivery(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, func(ctx context.Context, id string) (webhook.DeliveryDetail, error) {
		return h.svc.GetDelivery(ctx, id, r.PathValue("delivery_id"))
	})
}

func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if !contract.IsUUID(id) {
		return store.ErrNotFound
	}
	d, err := h.svc.Redeliver(r.Context(), id, r.PathValue("delivery_id"))
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusAccepted, d)
	return nil
}

func (h *Handler) recoverDeliveries(w http.ResponseWriter, r *http.Request) error {
	return keyChange(w, r, r.PathValue("id"), contract.IsUUID, func(ctx context.Context, id string, req webhook.RecoverRequest) (webhook.Recovered, error) {
		since, err := req.SinceTime()
		if err != nil {
			return webhook.Recovered{}, web.BadRequest(err.Error())
		}
		return h.svc.RecoverDeliveries(ctx, id, since)
	}, accepted[webhook.Recovered])
}

// accepted is the status of a change that is under way: 202.
func accepted[T any](T) int { return http.StatusAccepted }
