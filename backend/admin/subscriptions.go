package admin

import (
	"context"
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Subscription is a webhook subscription of a workspace as the Admin API
// shows it: as the workspace's own list does (webhook.Summary), and its
// workspace. Its signing key is never shown, only whether it has one.
type Subscription struct {
	WorkspaceID string `json:"workspace_id"`
	webhook.Summary
}

// subscriptionOut is sub as the API shows it.
func subscriptionOut(sub store.Subscription) Subscription {
	return Subscription{WorkspaceID: sub.WorkspaceID, Summary: webhook.SummaryOf(sub)}
}

// SubscriptionQuery selects webhook subscriptions: of a workspace, of a
// status, a page at a time in creation order.
type SubscriptionQuery struct {
	Workspace string
	Status    store.SubscriptionStatus
	Cursor    string
	Limit     int
}

// ParseSubscriptionQuery reads a SubscriptionQuery from the query of GET
// /admin/v1/subscriptions: workspace, status (active, disabled), cursor,
// limit.
func ParseSubscriptionQuery(q url.Values) (SubscriptionQuery, error) {
	v, err := query(q, "workspace", "status", "cursor", "limit")
	if err != nil {
		return SubscriptionQuery{}, err
	}
	sq := SubscriptionQuery{Workspace: v["workspace"], Status: store.SubscriptionStatus(v["status"]), Cursor: v["cursor"]}
	if err := sq.check(); err != nil {
		return sq, err
	}
	sq.Limit, err = limitOf(v["limit"])
	return sq, err
}

// check refuses a query the list does not take, from the API or the
// command line alike.
func (q SubscriptionQuery) check() error {
	switch {
	case q.Workspace != "" && !contract.ValidID(q.Workspace):
		return problem.New(400, problem.CodeInvalidRequest, "workspace is not a workspace id")
	case q.Status != "" && q.Status != store.SubscriptionActive && q.Status != store.SubscriptionDisabled:
		return problem.New(400, problem.CodeInvalidRequest, "status must be active or disabled")
	}
	return checkLimit(q.Limit)
}

// Values returns q as query parameters, ParseSubscriptionQuery's inverse.
func (q SubscriptionQuery) Values() url.Values {
	return values("workspace", q.Workspace, "status", string(q.Status), "cursor", q.Cursor, "limit", limitValue(q.Limit))
}

// ListSubscriptions returns a page of the webhook subscriptions q selects,
// of every workspace unless q names one.
func (s *Service) ListSubscriptions(ctx context.Context, q SubscriptionQuery) (Page[Subscription], error) {
	if err := q.check(); err != nil {
		return Page[Subscription]{}, err
	}
	after, err := afterCursor(q.Cursor)
	if err != nil {
		return Page[Subscription]{}, err
	}
	limit := sizeOf(q.Limit)
	list, err := s.st.ListSubscriptions(ctx, store.SubscriptionFilter{WorkspaceID: q.Workspace, Status: q.Status, After: after, Limit: limit})
	if err != nil {
		return Page[Subscription]{}, err
	}
	out := make([]Subscription, 0, len(list))
	for _, sub := range list {
		out = append(out, subscriptionOut(sub))
	}
	return keysetPage(out, limit, func(s Subscription) store.Cursor { return store.Cursor{CreatedAt: s.CreatedAt, ID: s.ID} }), nil
}

// GetSubscription returns the webhook subscription id, of whatever
// workspace.
func (s *Service) GetSubscription(ctx context.Context, id string) (Subscription, error) {
	sub, err := s.st.GetSubscription(ctx, "", id)
	if err != nil {
		return Subscription{}, err
	}
	return subscriptionOut(sub), nil
}

// DeleteSubscription deletes the webhook subscription id, of whatever
// workspace, with its deliveries, and returns it as it was; the audit
// record names the person.
func (s *Service) DeleteSubscription(ctx context.Context, id string) (Subscription, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return Subscription{}, err
	}
	sub, err := s.webhooks.DeleteBy(ctx, by, id)
	if err != nil {
		return Subscription{}, err
	}
	return subscriptionOut(sub), nil
}

func (h *Handler) listSubscriptions(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, ParseSubscriptionQuery, h.svc.ListSubscriptions)
}

func (h *Handler) getSubscription(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.GetSubscription)
}

func (h *Handler) deleteSubscription(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.DeleteSubscription)
}
