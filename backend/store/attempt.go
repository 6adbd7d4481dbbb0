package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// Validate reports whether n may follow an attempt: the delivery is
// retried, delivered or failed, and only a failed delivery disables its
// subscription.
func (n Next) Validate() error {
	switch {
	case n.Status != DeliveryPending && n.Status != DeliveryDelivered && n.Status != DeliveryFailed:
		return fmt.Errorf("store: a delivery cannot move to %q after an attempt", n.Status)
	case n.DisableSubscription && n.Status != DeliveryFailed:
		return errors.New("store: disabling the subscription fails the delivery")
	case n.DisableSubscription != (n.Disabled.Action == audit.DeliveryDisabled):
		return errors.New("store: disabling the subscription is audited as delivery_disabled, and only it")
	}
	return nil
}

// LeasedDelivery is what an engine read of a delivery pending under a
// worker's lease, with its row locked.
type LeasedDelivery struct {
	SubscriptionID string
	Attempts       int
	NextAttemptAt  time.Time
}

// DeliveryUpdate is a delivery's new state after an attempt.
type DeliveryUpdate struct {
	ID            string
	Status        DeliveryStatus
	Attempts      int
	NextAttemptAt time.Time
	// FinishedAt is zero while the delivery stays pending.
	FinishedAt time.Time
}

// AttemptTx is an engine's side of FinishAttempt: statements in one
// transaction, with no decision of their own.
type AttemptTx interface {
	AuditTx
	// LockLeased reads the delivery when it is pending under owner's lease,
	// locking its row, or returns ErrLeaseLost.
	LockLeased(ctx context.Context, deliveryID, owner string) (LeasedDelivery, error)
	// InsertAttempt stores a as attempt number n of its delivery.
	InsertAttempt(ctx context.Context, a Attempt, n int) error
	// UpdateDelivery stores u and ends the delivery's lease.
	UpdateDelivery(ctx context.Context, u DeliveryUpdate) error
	// NoteLastDelivery sets the subscription's last delivery to the
	// attempt started at start, unless a later-started one is recorded.
	NoteLastDelivery(ctx context.Context, subscriptionID string, start time.Time, outcome string) error
	// DisableSubscription disables the subscription and cancels its
	// pending deliveries, finished at now.
	DisableSubscription(ctx context.Context, subscriptionID string, now time.Time) error
}

// Finish is the decision of Store.FinishAttempt, for engines to run in
// their transaction: it records a as the next attempt of a delivery leased
// to owner and applies next.
func Finish(ctx context.Context, tx AttemptTx, owner string, a Attempt, next Next) error {
	if err := next.Validate(); err != nil {
		return err
	}
	d, err := tx.LockLeased(ctx, a.DeliveryID, owner)
	if err != nil {
		return err
	}
	n := d.Attempts + 1
	if err := tx.InsertAttempt(ctx, a, n); err != nil {
		return err
	}
	finished := a.StartedAt.Add(a.Duration)
	u := DeliveryUpdate{ID: a.DeliveryID, Status: next.Status, Attempts: n, NextAttemptAt: d.NextAttemptAt, FinishedAt: finished}
	if next.Status == DeliveryPending {
		u.NextAttemptAt, u.FinishedAt = next.RetryAt, time.Time{}
	}
	if err := tx.UpdateDelivery(ctx, u); err != nil {
		return err
	}
	// Attempts of one subscription finish out of order; the latest start wins.
	if err := tx.NoteLastDelivery(ctx, d.SubscriptionID, a.StartedAt, a.Outcome); err != nil {
		return err
	}
	if next.DisableSubscription {
		if err := tx.DisableSubscription(ctx, d.SubscriptionID, finished); err != nil {
			return err
		}
		_, err := AppendAudit(ctx, tx, next.Disabled)
		return err
	}
	return nil
}
