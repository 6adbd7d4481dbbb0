package storetest

import (
	"context"

	"github.com/health-data-connect/hdc/backend/store"
)

// Inspector reads what only tests look at. Every engine implements it
// beside store.Store; the backend itself never needs it.
type Inspector interface {
	// GetSubscription returns the workspace's subscription or
	// store.ErrNotFound.
	GetSubscription(ctx context.Context, workspaceID, id string) (store.Subscription, error)
	// GetDelivery returns a delivery with its event and subscription, or
	// store.ErrNotFound.
	GetDelivery(ctx context.Context, id string) (store.Delivery, error)
	// ListAttempts returns a delivery's attempts in order.
	ListAttempts(ctx context.Context, deliveryID string) ([]store.Attempt, error)
}

// Store is an engine as the suite sees it: the store and its inspector.
type Store interface {
	store.Store
	Inspector
}
