package webhook

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// Service owns what the public API and the Admin API both do to a
// subscription: a workspace's client deletes its own (Delete), an operator
// any workspace's (DeleteBy); each deletion is recorded in the audit trail
// in the same transaction.
type Service struct {
	store store.Subscriptions
	now   func() time.Time
}

// NewService returns the Service over st.
func NewService(st store.Subscriptions) *Service {
	return &Service{store: st, now: time.Now}
}

// Delete deletes workspaceID's subscription id, with its deliveries, and
// records e (the caller's event: its workspace, client or person, source)
// as its audit.SubscriptionDelete; store.ErrNotFound when the workspace
// has no such subscription.
func (s *Service) Delete(ctx context.Context, workspaceID, id string, e audit.Event) error {
	e.At, e.Action, e.Outcome = s.now(), audit.SubscriptionDelete, audit.Success
	if contract.IsUUID(id) {
		e.Entity = audit.Entity{Kind: audit.EntitySubscription, ID: id}
	}
	return s.store.DeleteSubscription(ctx, workspaceID, id, e)
}

// DeleteBy deletes the subscription id of whatever workspace in the name
// of the operator by, whom its audit record names, and returns it as it
// was; store.ErrNotFound when there is none.
func (s *Service) DeleteBy(ctx context.Context, by audit.Person, id string) (store.Subscription, error) {
	if by == (audit.Person{}) {
		return store.Subscription{}, audit.ErrNoPerson
	}
	sub, err := s.store.GetSubscription(ctx, "", id)
	if err != nil {
		return store.Subscription{}, err
	}
	return sub, s.Delete(ctx, sub.WorkspaceID, id, audit.Event{Workspace: sub.WorkspaceID, Person: by})
}

// SummaryOf is sub as a list shows it, without its signing key.
func SummaryOf(sub store.Subscription) Summary {
	out := Summary{
		ID:             sub.ID,
		Endpoint:       sub.Endpoint,
		Protocol:       sub.Protocol,
		EventNames:     canonical(sub.EventNames),
		Status:         string(sub.Status),
		HasSigningKey:  sub.SigningKey != "",
		DeliveryFormat: sub.Format(),
		CreatedAt:      sub.CreatedAt,
	}
	if !sub.LastDeliveryAt.IsZero() {
		out.LastDeliveryAt = &sub.LastDeliveryAt
		out.LastDeliveryOutcome = &sub.LastDeliveryOutcome
	}
	if sub.Status == store.SubscriptionDisabled && sub.DisabledReason != "" {
		out.DisabledReason = &sub.DisabledReason
	}
	return out
}
