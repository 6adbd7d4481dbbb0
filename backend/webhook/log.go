package webhook

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// Log is the delivery log of subscriptions and their redelivery, which a
// client's routes (DeliveryHandler) and the Admin API's share: each
// method takes the subscription's workspace, so a client's caller passes
// its own and another workspace's ids are not found.
type Log struct {
	store store.DeliveryLog
	now   func() time.Time
}

// NewLog returns the log over l.
func NewLog(l store.DeliveryLog) *Log { return &Log{store: l, now: time.Now} }

// List returns the page of the deliveries f selects.
func (l *Log) List(ctx context.Context, f store.DeliveryFilter) (DeliveryPage, error) {
	limit := f.Limit
	f.Limit++ // one more tells whether a next page exists
	ds, err := l.store.ListDeliveries(ctx, f)
	if err != nil {
		return DeliveryPage{}, err
	}
	return deliveryPage(ds, limit), nil
}

// Get returns one delivery of the workspace's subscription with its
// attempts.
func (l *Log) Get(ctx context.Context, workspaceID, subscriptionID, deliveryID string) (DeliveryDetail, error) {
	d, as, err := l.store.DeliveryAttempts(ctx, workspaceID, subscriptionID, deliveryID)
	if err != nil {
		return DeliveryDetail{}, err
	}
	return DeliveryDetailOf(d, as), nil
}

// Redeliver makes one delivery due now, with its webhook-id, and records
// e (the caller's event) as its audit.DeliveryRedeliver.
func (l *Log) Redeliver(ctx context.Context, workspaceID, subscriptionID, deliveryID string, e audit.Event) (Delivery, error) {
	e = SubscriptionEvent(e, audit.DeliveryRedeliver, subscriptionID, l.now())
	d, err := l.store.Redeliver(ctx, workspaceID, subscriptionID, deliveryID, e)
	if err != nil {
		return Delivery{}, err
	}
	return DeliveryOf(d), nil
}

// Recover makes every failed or given-up delivery of the subscription
// created since since due, in creation order, and records e as its
// audit.DeliveryRecover.
func (l *Log) Recover(ctx context.Context, workspaceID, subscriptionID string, since time.Time, e audit.Event) (Recovered, error) {
	e = SubscriptionEvent(e, audit.DeliveryRecover, subscriptionID, l.now())
	n, err := l.store.RecoverDeliveries(ctx, workspaceID, subscriptionID, since, e)
	return Recovered{Recovered: n}, err
}
