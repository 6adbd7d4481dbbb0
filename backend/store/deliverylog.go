package store

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// DeliveryLog is what a client reads and asks of its subscriptions'
// deliveries (package webhook): the delivery log, one delivery with its
// attempts, and redelivery. Every method takes the caller's workspace and
// answers ErrNotFound for a subscription or delivery of another workspace,
// as for a missing one.
type DeliveryLog interface {
	// ListDeliveries returns a page of f.SubscriptionID's deliveries,
	// newest first (by creation time, then id). ErrNotFound when the
	// subscription is not one of f.WorkspaceID's.
	ListDeliveries(ctx context.Context, f DeliveryFilter) ([]LoggedDelivery, error)
	// DeliveryAttempts returns one delivery of the subscription with its
	// attempts, in order.
	DeliveryAttempts(ctx context.Context, workspaceID, subscriptionID, deliveryID string) (LoggedDelivery, []Attempt, error)
	// Redeliver makes the delivery pending and due at e.At, its attempts
	// kept (the next one continues their count), appends e (who asked) in
	// the same transaction, and returns it. ErrConflict when the
	// subscription is not active.
	Redeliver(ctx context.Context, workspaceID, subscriptionID, deliveryID string, e audit.Event) (LoggedDelivery, error)
	// RecoverDeliveries makes every delivery of the subscription created at
	// or after since whose log status is DeliveryLogFailed or
	// DeliveryLogGivenUp pending again, due from e.At on in creation order
	// (one microsecond apart), appends e in the same transaction, and
	// returns how many. ErrConflict when the subscription is not active.
	RecoverDeliveries(ctx context.Context, workspaceID, subscriptionID string, since time.Time, e audit.Event) (int, error)
}

// DeliveryLogStatus is a delivery's status as the log shows it.
type DeliveryLogStatus string

// The statuses of the delivery log, from the outbox's: a pending delivery
// is failed while its retry waits after a failed attempt, pending before
// its first attempt and once made due again (Redeliver,
// RecoverDeliveries) until its next attempt; a failed or canceled one is
// given up.
const (
	DeliveryLogPending   DeliveryLogStatus = "pending"
	DeliveryLogDelivered DeliveryLogStatus = "delivered"
	DeliveryLogFailed    DeliveryLogStatus = "failed"
	DeliveryLogGivenUp   DeliveryLogStatus = "given_up"
)

// DeliveryFilter selects a page of a subscription's deliveries.
type DeliveryFilter struct {
	WorkspaceID, SubscriptionID string
	Status                      DeliveryLogStatus // "" for any
	EventType                   string            // "" for any
	// Since and Until bound the creation time: Since <= created < Until
	// (zero: no bound).
	Since, Until time.Time
	// Before is where the page starts: the deliveries listed before the one
	// created at Before.CreatedAt with id Before.ID (zero: from the newest).
	Before Cursor
	Limit  int // 0 for no bound
}

// LoggedDelivery is a delivery as the log shows it.
type LoggedDelivery struct {
	ID             string
	SubscriptionID string
	EventID        string
	EventType      string
	Status         DeliveryLogStatus
	Attempts       int
	CreatedAt      time.Time
	// DeliveredAt is zero unless delivered; NextAttemptAt is zero unless
	// pending.
	DeliveredAt, NextAttemptAt time.Time
	// LastOutcome is the last attempt's outcome, "" before the first.
	LastOutcome string
}

// LogStatus is the log status of a delivery in outbox status status whose
// last attempt finished at finished (Delivery.FinishedAt: for a pending
// delivery, zero unless a failed attempt's retry waits).
func LogStatus(status DeliveryStatus, finished time.Time) DeliveryLogStatus {
	switch {
	case status == DeliveryDelivered:
		return DeliveryLogDelivered
	case status == DeliveryFailed, status == DeliveryCanceled:
		return DeliveryLogGivenUp
	case !finished.IsZero():
		return DeliveryLogFailed
	}
	return DeliveryLogPending
}

// MaxResponseBody is the most bytes of an endpoint's answer an attempt
// keeps (Attempt.ResponseBody).
const MaxResponseBody = 1024
