package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// Outbox is the webhook outbox (packages webhook and webhook/delivery). An
// event is stored with one delivery per matching subscription in a single
// transaction; delivery workers, in any number of processes sharing the
// database, claim due deliveries under a lease, attempt them and report
// each attempt with FinishAttempt. A worker that dies leaves its claims to
// expire, and they are claimed again.
type Outbox interface {
	// PublishEvent stores e and, in the same transaction, one pending
	// delivery due at e.CreatedAt for every active subscription of
	// e.WorkspaceID that selects e.Type. Delivery ids are generated, random
	// and unique; PublishEvent returns them. ErrNotFound when the workspace
	// does not exist, ErrConflict when e.ID is taken; nothing is stored then.
	PublishEvent(ctx context.Context, e Event) (deliveryIDs []string, err error)
	// ClaimDeliveries leases deliveries as c describes: pending ones due at
	// c.Now and not under an unexpired lease, taken in turns across
	// workspaces (each workspace's earliest due delivery before any
	// workspace's second, and so on), earliest due first within a turn.
	// Two concurrent claims never return the same delivery.
	ClaimDeliveries(ctx context.Context, c Claim) ([]Delivery, error)
	// FinishAttempt records attempt a of a delivery leased to owner and
	// applies next, atomically: the attempt gets the next Number, the
	// delivery's status and due time follow next and its lease ends, and the
	// subscription's LastDeliveryAt and LastDeliveryOutcome become a's
	// start and outcome, and its FailingSince is cleared by a delivery or
	// set by the first failure since. With next.DisableSubscription (410)
	// or once it has been failing for next.FailingFor, an active
	// subscription is disabled with its reason (its other pending
	// deliveries are kept, not claimed until it is enabled again),
	// next.Disabled is appended to the audit trail and next.Notice, when
	// it has an id, is published to the workspace's active subscriptions,
	// all in the same transaction. ErrLeaseLost
	// when the delivery is not pending under owner's lease; nothing changes
	// then.
	FinishAttempt(ctx context.Context, owner string, a Attempt, next Next) error
	// ReleaseDelivery ends owner's lease on a delivery without recording an
	// attempt, so that it can be claimed at once (a worker shutting down
	// mid-attempt). ErrLeaseLost as for FinishAttempt.
	ReleaseDelivery(ctx context.Context, owner, deliveryID string) error
	// OutboxStats describes the pending deliveries of active
	// subscriptions (a disabled one's are kept, not waiting).
	OutboxStats(ctx context.Context) (OutboxStats, error)
	// PruneOutbox deletes the deliveries that finished before before, with
	// their attempts, and the events created before before that have no
	// delivery left. It returns the number of deliveries deleted.
	// The pending deliveries of a subscription disabled since before
	// before are deleted too.
	PruneOutbox(ctx context.Context, before time.Time) (int64, error)
	// PruneAttempts deletes the attempts started before before, answer
	// excerpts and all, and returns how many.
	PruneAttempts(ctx context.Context, before time.Time) (int64, error)
}

// Claim describes a claim of due deliveries (Outbox.ClaimDeliveries).
type Claim struct {
	// Owner holds the leases; each claim must use an owner no other
	// claim uses.
	Owner string
	// Now is when the claim is made; the leases last until LeaseUntil.
	Now, LeaseUntil time.Time
	// Limit is the most deliveries the claim takes.
	Limit int
	// PerWorkspace, when positive, is the most deliveries of one workspace
	// under an unexpired lease once the claim is made, whoever holds the
	// leases: a workspace at its cap gets none.
	PerWorkspace int
}

// Event is something that happened in a workspace, published to the
// subscriptions that select its type.
type Event struct {
	ID          string
	WorkspaceID string
	// Type is one of the event names of the API (webhook.Events).
	Type string
	// Data is the event's JSON object, delivered as the payload's "data".
	Data      []byte
	CreatedAt time.Time
	// TraceParent is the W3C traceparent of the request that published
	// the event, "" when it was not traced: each delivery attempt's span
	// links to that trace.
	TraceParent string
}

// DeliveryStatus is the state of a delivery.
type DeliveryStatus string

// Delivery statuses. Pending is the only one that changes.
const (
	// DeliveryPending: waiting for its first attempt or a retry.
	DeliveryPending DeliveryStatus = "pending"
	// DeliveryDelivered: an attempt succeeded.
	DeliveryDelivered DeliveryStatus = "delivered"
	// DeliveryFailed: given up (retries exhausted, a permanent error, or
	// the subscription answered that it is gone).
	DeliveryFailed DeliveryStatus = "failed"
	// DeliveryCanceled: its subscription was disabled before it succeeded.
	DeliveryCanceled DeliveryStatus = "canceled"
)

// Delivery is one event on its way to one subscription.
type Delivery struct {
	// ID is random and stable across attempts: the webhook-id derives from it.
	ID    string
	Event Event
	// Subscription is the target; its EventNames are not loaded.
	Subscription Subscription
	Status       DeliveryStatus
	// Attempts counts the finished attempts.
	Attempts      int
	CreatedAt     time.Time
	NextAttemptAt time.Time
	// LeaseOwner and LeaseExpiresAt describe the current or last claim;
	// empty and zero before the first claim and after an attempt.
	LeaseOwner     string
	LeaseExpiresAt time.Time
	// FinishedAt is when its last attempt finished: the final one of a
	// delivered, failed or canceled delivery, or for a pending one the
	// failed attempt its retry follows. It is zero before the first
	// attempt, and again once the delivery is made due again (Redeliver,
	// RecoverDeliveries) until its next attempt finishes.
	FinishedAt time.Time
}

// Attempt is one try at a delivery.
type Attempt struct {
	DeliveryID string
	// Number counts from 1; FinishAttempt assigns it.
	Number    int
	StartedAt time.Time
	Duration  time.Duration
	// Outcome is a short code: "delivered", "http_503", "timeout", … It is
	// shown to the subscriber and must not carry secrets or payloads.
	Outcome string
	// StatusCode is the HTTP status of the answer, 0 when there was none.
	StatusCode int
	// ResponseBody is at most the first MaxResponseBody bytes of the
	// answer's body, valid UTF-8; "" when none was kept.
	ResponseBody string
}

// Next says what becomes of a delivery after an attempt.
type Next struct {
	// Status is DeliveryPending to retry at RetryAt, DeliveryDelivered or
	// DeliveryFailed.
	Status  DeliveryStatus
	RetryAt time.Time
	// DisableSubscription, with DeliveryFailed, disables the subscription
	// (it answered 410 Gone).
	DisableSubscription bool
	// FailingFor, when positive, disables the subscription after a failed
	// attempt that ends FailingFor or more after its FailingSince.
	FailingFor time.Duration
	// Disabled is the audit event (audit.DeliveryDisabled) FinishAttempt
	// appends, with its reason, when it disables the subscription.
	Disabled audit.Event
	// Notice, when its ID is set, is the event (EventSubscriptionDisabled)
	// FinishAttempt publishes when it disables the subscription; its Data
	// is DisabledData's.
	Notice Event
	// Reported, when not nil, receives the reason FinishAttempt disabled
	// the subscription for (DisabledGone, DisabledFailing), for metrics;
	// it is left alone when it did not.
	Reported *string
}

// EventSubscriptionDisabled is the event telling a workspace that one of
// its subscriptions was disabled.
const EventSubscriptionDisabled = "subscription.disabled"

// OutboxStats describes the pending deliveries of all workspaces.
type OutboxStats struct {
	Pending int64
	// OldestPending is the creation time of the oldest pending delivery,
	// zero when none is pending.
	OldestPending time.Time
}

// Validate reports whether n may follow an attempt: the delivery is
// retried, delivered or failed, and only a failed delivery disables its
// subscription.
func (n Next) Validate() error {
	switch {
	case n.Status != DeliveryPending && n.Status != DeliveryDelivered && n.Status != DeliveryFailed:
		return fmt.Errorf("store: a delivery cannot move to %q after an attempt", n.Status)
	case n.DisableSubscription && n.Status != DeliveryFailed:
		return errors.New("store: disabling the subscription fails the delivery")
	case n.FailingFor < 0:
		return errors.New("store: the failing period must not be negative")
	case (n.DisableSubscription || n.FailingFor > 0) != (n.Disabled.Action == audit.DeliveryDisabled):
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
	// FinishedAt is when the attempt finished (Delivery.FinishedAt).
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
	// NoteFailing clears the subscription's failing-since after a
	// delivery, or sets it to start after a failure unless it is set, and
	// returns it (zero when cleared).
	NoteFailing(ctx context.Context, subscriptionID string, start time.Time, failed bool) (time.Time, error)
	// DisableSubscription disables the subscription with reason if it is
	// active, and reports whether it was; its deliveries are unchanged.
	DisableSubscription(ctx context.Context, subscriptionID, reason string) (bool, error)
	// Publish stores e and its deliveries as Outbox.PublishEvent does.
	Publish(ctx context.Context, e Event) error
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
		u.NextAttemptAt = next.RetryAt
	}
	if err := tx.UpdateDelivery(ctx, u); err != nil {
		return err
	}
	// Attempts of one subscription finish out of order; the latest start wins.
	if err := tx.NoteLastDelivery(ctx, d.SubscriptionID, a.StartedAt, a.Outcome); err != nil {
		return err
	}
	return disableFailing(ctx, tx, d.SubscriptionID, a.StartedAt, finished, next)
}

// ClaimEngine is an engine's side of ClaimDeliveries.
type ClaimEngine interface {
	// AnyDue reports whether a delivery is due at now and not under
	// lease, without a lock.
	AnyDue(ctx context.Context, now time.Time) (bool, error)
	// ClaimLocked leases and returns the deliveries c claims, under the
	// engine's lock, so that the count of leases per workspace is exact.
	ClaimLocked(ctx context.Context, c Claim) ([]Delivery, error)
}

// ClaimDue is Outbox.ClaimDeliveries for engines. Most claims find nothing
// due: it looks first, without the lock, which every poll of every replica
// would otherwise take.
func ClaimDue(ctx context.Context, e ClaimEngine, c Claim) ([]Delivery, error) {
	if c.Limit <= 0 {
		return nil, nil
	}
	if due, err := e.AnyDue(ctx, c.Now); err != nil || !due {
		return nil, err
	}
	return e.ClaimLocked(ctx, c)
}
