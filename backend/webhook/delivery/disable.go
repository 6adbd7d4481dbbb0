package delivery

import (
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// disabling completes next, the decision after an attempt at a delivery
// to sub that ended at end, with what the store needs to disable sub: the
// failing period, the audit event and the subscription.disabled notice to
// the workspace's other subscriptions. The store decides (a 410, or
// failing for the period) and writes the reason it disabled sub for into
// reported.
func (d *Dispatcher) disabling(next *store.Next, sub store.Subscription, end time.Time, reported *string) {
	next.FailingFor = d.cfg.DisableAfter
	if !next.DisableSubscription && next.FailingFor == 0 {
		return
	}
	next.Disabled = disabledEvent(sub, end)
	next.Notice = store.Event{ID: uuid.NewString(), WorkspaceID: sub.WorkspaceID, Type: store.EventSubscriptionDisabled, CreatedAt: end}
	next.Reported = reported
}

// disabledEvent is the audit event of subscription sub disabled at t by
// the backend (a 410, or failing for the period: the store adds the
// reason). The backend acts on its own: no client, source or request.
func disabledEvent(sub store.Subscription, t time.Time) audit.Event {
	e := audit.Event{At: t, Action: audit.DeliveryDisabled, Outcome: audit.Success, Workspace: sub.WorkspaceID}
	if contract.IsUUID(sub.ID) {
		e.Entity = audit.Entity{Kind: audit.EntitySubscription, ID: sub.ID}
	}
	return e
}
