package storetest

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// Inspector reads what only tests look at. Every engine implements it
// beside store.Store; the backend itself never needs it.
type Inspector interface {
	// GetDelivery returns a delivery with its event and subscription, or
	// store.ErrNotFound.
	GetDelivery(ctx context.Context, id string) (store.Delivery, error)
	// ListAttempts returns a delivery's attempts in order.
	ListAttempts(ctx context.Context, deliveryID string) ([]store.Attempt, error)
	// AppendAuditThen appends e with store.AppendAudit in one of the
	// engine's transactions and runs then in it, committing when then
	// returns nil: a change recording itself.
	AppendAuditThen(ctx context.Context, e audit.Event, then func() error) (audit.Record, error)
	// SetAuditBody overwrites the stored canonical form of a record, as
	// someone with the database's password could.
	SetAuditBody(ctx context.Context, workspace string, seq int64, body []byte) error
	// DeleteAuditRecord deletes a record's row, likewise.
	DeleteAuditRecord(ctx context.Context, workspace string, seq int64) error
	// SetAuditColumns overwrites a record's row's search columns (its
	// time and its acting client), likewise.
	SetAuditColumns(ctx context.Context, workspace string, seq int64, at time.Time, client string) error
}

// Store is an engine as the suite sees it: the store and its inspector.
type Store interface {
	store.Store
	Inspector
}
