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
// does (webhook.SummaryOf), its workspace, and since when it fails.
func subscriptionOut(sub store.Subscription) adminapi.Subscription {
	s := webhook.SummaryOf(sub)
	out := adminapi.Subscription{WorkspaceID: sub.WorkspaceID, ID: s.ID, Endpoint: s.Endpoint, Protocol: s.Protocol,
		EventNames: s.EventNames, Status: s.Status, HasSigningKey: s.HasSigningKey, DeliveryFormat: s.DeliveryFormat,
		CreatedAt: s.CreatedAt, LastDeliveryAt: s.LastDeliveryAt, LastDeliveryOutcome: s.LastDeliveryOutcome, DisabledReason: s.DisabledReason}
	if !sub.FailingSince.IsZero() {
		out.FailingSince = &sub.FailingSince
	}
	return out
}

// ListSubscriptions returns a page of the webhook subscriptions q selects,
// of every workspace unless q names one. A page of failing ones reads at
// most adminapi.FailingScan subscriptions (failingWindow).
func (s *Service) ListSubscriptions(ctx context.Context, q adminapi.SubscriptionQuery) (adminapi.Page[adminapi.Subscription], error) {
	return s.listSubscriptions(ctx, q, adminapi.FailingScan)
}

// listSubscriptions is ListSubscriptions whose page of failing
// subscriptions reads at most scan.
func (s *Service) listSubscriptions(ctx context.Context, q adminapi.SubscriptionQuery, scan int) (adminapi.Page[adminapi.Subscription], error) {
	if err := q.Check(); err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	after, err := afterCursor(q.Cursor)
	if err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	limit := sizeOf(q.Limit)
	f := store.SubscriptionFilter{WorkspaceID: q.Workspace, Status: store.SubscriptionStatus(q.Status), Failing: q.Failing,
		After: after, Limit: limit}
	more, err := s.failingWindow(ctx, &f, scan)
	if err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	list, err := s.st.ListSubscriptions(ctx, f)
	if err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	p := keysetPage(mapped(list, subscriptionOut), limit, func(s adminapi.Subscription) store.Cursor {
		return store.Cursor{CreatedAt: s.CreatedAt, ID: s.ID}
	})
	if p.Next == "" && more {
		p.Next = nextCursor(f.Through) // the window ended before the page filled
	}
	return p, nil
}

// failingWindow bounds a list by Failing, which no index serves, to a
// window of scan subscriptions from f.After (f.Through), and reports
// whether more follow it.
func (s *Service) failingWindow(ctx context.Context, f *store.SubscriptionFilter, scan int) (bool, error) {
	if !f.Failing {
		return false, nil
	}
	end, more, err := s.st.SubscriptionWindow(ctx, *f, scan)
	f.Through = end
	return more, err
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
