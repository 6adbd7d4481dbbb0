package admin

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// subscriptionOut is sub as the API shows it: as the workspace's own list
// does (webhook.SummaryOf), and its workspace.
func subscriptionOut(sub store.Subscription) adminapi.Subscription {
	s := webhook.SummaryOf(sub)
	return adminapi.Subscription{WorkspaceID: sub.WorkspaceID, ID: s.ID, Endpoint: s.Endpoint, Protocol: s.Protocol,
		EventNames: s.EventNames, Status: s.Status, HasSigningKey: s.HasSigningKey, DeliveryFormat: s.DeliveryFormat,
		CreatedAt: s.CreatedAt, LastDeliveryAt: s.LastDeliveryAt, LastDeliveryOutcome: s.LastDeliveryOutcome, DisabledReason: s.DisabledReason}
}

// ListSubscriptions returns a page of the webhook subscriptions q selects,
// of every workspace unless q names one.
func (s *Service) ListSubscriptions(ctx context.Context, q adminapi.SubscriptionQuery) (adminapi.Page[adminapi.Subscription], error) {
	if err := q.Check(); err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	after, err := afterCursor(q.Cursor)
	if err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	limit := sizeOf(q.Limit)
	list, err := s.st.ListSubscriptions(ctx, store.SubscriptionFilter{WorkspaceID: q.Workspace, Status: store.SubscriptionStatus(q.Status),
		After: after, Limit: limit})
	if err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	return keysetPage(mapped(list, subscriptionOut), limit, func(s adminapi.Subscription) store.Cursor {
		return store.Cursor{CreatedAt: s.CreatedAt, ID: s.ID}
	}), nil
}

// GetSubscription returns the webhook subscription id, of whatever
// workspace.
func (s *Service) GetSubscription(ctx context.Context, id string) (adminapi.Subscription, error) {
	sub, err := s.st.GetSubscription(ctx, "", id)
	if err != nil {
		return adminapi.Subscription{}, err
	}
	return subscriptionOut(sub), nil
}

// DeleteSubscription deletes the webhook subscription id, of whatever
// workspace, with its deliveries, and returns it as it was; the audit
// record names the person.
func (s *Service) DeleteSubscription(ctx context.Context, id string) (adminapi.Subscription, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.Subscription{}, err
	}
	sub, err := s.webhooks.DeleteBy(ctx, by, id)
	if err != nil {
		return adminapi.Subscription{}, err
	}
	return subscriptionOut(sub), nil
}

func (h *Handler) listSubscriptions(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, adminapi.ParseSubscriptionQuery, h.svc.ListSubscriptions)
}

func (h *Handler) getSubscription(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.GetSubscription)
}

func (h *Handler) deleteSubscription(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.DeleteSubscription)
}
