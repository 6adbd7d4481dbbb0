package webhook

import (
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
)

// SubscriptionEvent returns e, the caller's event (a client's, or an
// operator's naming the person), as the successful action on subscription
// id at at. An id that is no subscription's names no entity: the store
// answers ErrNotFound for it before the event is appended.
func SubscriptionEvent(e audit.Event, action audit.Action, id string, at time.Time) audit.Event {
	e.At, e.Action, e.Outcome = at, action, audit.Success
	if contract.IsUUID(id) {
		e.Entity = audit.Entity{Kind: audit.EntitySubscription, ID: id}
	}
	return e
}

// Wake tells a local delivery dispatcher that deliveries are due now, so
// that they go before its next poll (delivery.Dispatcher.Notify); nil
// tells no one, and the dispatchers find them at their next poll.
type Wake func()

// due calls w if it is set.
func (w Wake) due() {
	if w != nil {
		w()
	}
}
