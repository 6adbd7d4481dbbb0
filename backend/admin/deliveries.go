package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
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
	"the subscription is disabled: nothing is sent to it until it is enabled (by its client, or an operator: POST …/enable)")

// deliveryOut is d as the API shows it.
func deliveryOut(d webhook.Delivery) adminapi.Delivery {
	return adminapi.Delivery{ID: d.ID, EventID: d.EventID, EventType: d.EventType, Status: d.Status, CreatedAt: d.CreatedAt,
		DeliveredAt: d.DeliveredAt, Attempts: d.Attempts, NextAttemptAt: d.NextAttemptAt, LastOutcome: d.LastOutcome}
}

// deliveryPageOut is p as the API shows it.
func deliveryPageOut(p webhook.DeliveryPage) adminapi.DeliveryPage {
	return adminapi.DeliveryPage{Deliveries: mapped(p.Deliveries, deliveryOut), Next: p.Next}
}

// attemptOut is a as the API shows it.
func attemptOut(a webhook.AttemptView) adminapi.Attempt {
	return adminapi.Attempt{Number: a.Number, StartedAt: a.StartedAt, DurationMS: a.DurationMS, StatusCode: a.StatusCode,
		Outcome: a.Outcome, ResponseBody: a.ResponseBody}
}

// deliveryDetailOut is d as the API shows it.
func deliveryDetailOut(d webhook.DeliveryDetail) adminapi.DeliveryDetail {
	return adminapi.DeliveryDetail{Delivery: deliveryOut(d.Delivery), AttemptList: mapped(d.AttemptList, attemptOut)}
}

// deliveryFilter reads the query of GET
// /admin/v1/subscriptions/{id}/deliveries as a client's delivery log
// takes it (webhook.ParseDeliveryQuery): cursor, limit, status,
// event_type, since, until.
func deliveryFilter(q url.Values) (store.DeliveryFilter, error) {
	f, err := webhook.ParseDeliveryQuery(q)
	if err != nil {
		return f, problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, err.Error())
	}
	return f, nil
}

// ListDeliveries returns a page of the delivery log of the webhook
// subscription id, of whatever workspace: the deliveries q selects.
func (s *Service) ListDeliveries(ctx context.Context, id string, q adminapi.DeliveryQuery) (adminapi.DeliveryPage, error) {
	f, err := deliveryFilter(q.Values())
	if err != nil {
		return adminapi.DeliveryPage{}, err
	}
	return s.deliveries(ctx, id, f)
}

// deliveries returns the page of the subscription id's log that f selects
// (its workspace and subscription are id's).
func (s *Service) deliveries(ctx context.Context, id string, f store.DeliveryFilter) (adminapi.DeliveryPage, error) {
	sub, err := s.st.GetSubscription(ctx, "", id)
	if err != nil {
		return adminapi.DeliveryPage{}, err
	}
	f.WorkspaceID, f.SubscriptionID = sub.WorkspaceID, sub.ID
	p, err := s.log.List(ctx, f)
	return deliveryPageOut(p), err
}

// GetDelivery returns one delivery of the subscription id with its
// attempts.
func (s *Service) GetDelivery(ctx context.Context, id, deliveryID string) (adminapi.DeliveryDetail, error) {
	sub, err := s.st.GetSubscription(ctx, "", id)
	if err != nil {
		return adminapi.DeliveryDetail{}, err
	}
	d, err := s.log.Get(ctx, sub.WorkspaceID, sub.ID, deliveryID)
	return deliveryDetailOut(d), err
}

// Redeliver sends one delivery of the subscription id again, with its
// webhook-id; the audit record names the person.
func (s *Service) Redeliver(ctx context.Context, id, deliveryID string) (adminapi.Delivery, error) {
	sub, e, err := s.subscriptionChange(ctx, id)
	if err != nil {
		return adminapi.Delivery{}, err
	}
	d, err := s.log.Redeliver(ctx, sub.WorkspaceID, sub.ID, deliveryID, e)
	return deliveryOut(d), disabledOr(err)
}

// RecoverDeliveries sends again every delivery of the subscription id
// that failed or was given up since since, in creation order, and says
// how many; the audit record names the person.
func (s *Service) RecoverDeliveries(ctx context.Context, id string, since time.Time) (adminapi.Recovered, error) {
	sub, e, err := s.subscriptionChange(ctx, id)
	if err != nil {
		return adminapi.Recovered{}, err
	}
	n, err := s.log.Recover(ctx, sub.WorkspaceID, sub.ID, since, e)
	return adminapi.Recovered{Recovered: n.Recovered}, disabledOr(err)
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
	f, err := deliveryFilter(r.URL.Query())
	if err != nil {
		return err
	}
	return byID(w, r, func(ctx context.Context, id string) (adminapi.DeliveryPage, error) {
		return h.svc.deliveries(ctx, id, f)
	})
}

func (h *Handler) getDelivery(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, func(ctx context.Context, id string) (adminapi.DeliveryDetail, error) {
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
	return keyChange(w, r, r.PathValue("id"), contract.IsUUID, func(ctx context.Context, id string, req adminapi.RecoverRequest) (adminapi.Recovered, error) {
		since, err := webhook.RecoverRequest{Since: req.Since}.SinceTime()
		if err != nil {
			return adminapi.Recovered{}, web.BadRequest(err.Error())
		}
		return h.svc.RecoverDeliveries(ctx, id, since)
	}, accepted[adminapi.Recovered])
}

// accepted is the status of a change that is under way: 202.
func accepted[T any](T) int { return http.StatusAccepted }
