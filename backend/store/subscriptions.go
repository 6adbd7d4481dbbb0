package store

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// Subscriptions are the webhook registrations of workspaces (package webhook).
type Subscriptions interface {
	// CreateSubscription stores s; ErrNotFound when its workspace does not
	// exist, ErrConflict when the workspace already has s.Endpoint, ErrLimit
	// when it already has max subscriptions (max <= 0: no limit). The count
	// and the insert are atomic: concurrent creations never exceed max.
	// It appends e to the audit trail in the same transaction.
	CreateSubscription(ctx context.Context, s Subscription, max int, e audit.Event) error
	// ListSubscriptions returns the subscriptions f selects ordered by
	// creation time, then id.
	ListSubscriptions(ctx context.Context, f SubscriptionFilter) ([]Subscription, error)
	// SubscriptionWindow returns the end of the window of the n (>= 1)
	// subscriptions f selects after f.After in creation order (f.Failing,
	// f.Through and f.Limit aside), the n-th one's position, when another
	// follows it; zero and false when n or fewer follow f.After. A list
	// by Failing, which no index serves, reads at most n rows through it
	// (Through).
	SubscriptionWindow(ctx context.Context, f SubscriptionFilter, n int) (Cursor, bool, error)
	// GetSubscription returns the workspace's subscription id (of any
	// workspace when workspaceID is "") or ErrNotFound.
	GetSubscription(ctx context.Context, workspaceID, id string) (Subscription, error)
	// DeleteSubscription removes the workspace's subscription, with its
	// deliveries, or returns ErrNotFound.
	// It appends e to the audit trail in the same transaction.
	DeleteSubscription(ctx context.Context, workspaceID, id string, e audit.Event) error
	// RotateSigningKey makes r.Key the workspace's subscription id's
	// signing key and its current key, if any, the previous key until
	// r.PreviousUntil (a previous key still in its grace is dropped), or
	// returns ErrNotFound. The keys are stored as given: package sealed
	// seals r.Key, and moves the current key, sealed, as it is. It
	// appends r.Event in the same transaction.
	RotateSigningKey(ctx context.Context, workspaceID, id string, r SigningKeyChange) error
	// SetSubscriptionEnabled enables or disables the workspace's
	// subscription id as c says and returns it as it then is, or
	// ErrNotFound. Enabling clears its disabled reason and failing-since
	// and makes its kept pending deliveries due at c.At; disabling sets
	// the reason DisabledByClient. It appends c.Event in the same
	// transaction.
	SetSubscriptionEnabled(ctx context.Context, workspaceID, id string, c Enablement) (Subscription, error)
}

// SigningKeyChange is a new signing key of a subscription
// (Subscriptions.RotateSigningKey).
type SigningKeyChange struct {
	Key string
	// PreviousUntil is when the replaced key stops signing.
	PreviousUntil time.Time
	// Event is the audit event appended with the change.
	Event audit.Event
}

// Enablement is a client's choice to turn its subscription on or off
// (Subscriptions.SetSubscriptionEnabled).
type Enablement struct {
	Enabled bool
	At      time.Time
	// Event is the audit event appended with the change.
	Event audit.Event
}

// Why a subscription is disabled (Subscription.DisabledReason).
const (
	// DisabledGone: its endpoint answered 410 Gone.
	DisabledGone = "gone"
	// DisabledFailing: every attempt failed for the disable period.
	DisabledFailing = "failing"
	// DisabledByClient: its client disabled it.
	DisabledByClient = "client"
)

// SubscriptionFilter selects subscriptions for ListSubscriptions, a page
// in creation order.
type SubscriptionFilter struct {
	WorkspaceID string             // "" for every workspace
	Status      SubscriptionStatus // "" for any
	// Failing selects the failing subscriptions only (FailingSQL). No
	// index serves it: Through bounds the rows a page reads.
	Failing bool
	// After is where the page starts (zero: from the first).
	After Cursor
	// Through, unless zero, is the last subscription the page may reach
	// (SubscriptionWindow finds it).
	Through Cursor
	Limit   int // 0 for no bound
}

// FailingSQL is the condition on a row of subscriptions that is failing:
// its last attempt failed (failing_since, Subscription.FailingSince), or a
// failure disabled it (DisabledGone, DisabledFailing).
const FailingSQL = `(failing_since IS NOT NULL OR disabled_reason IN ('` + DisabledGone + `', '` + DisabledFailing + `'))`

// SubscriptionStatus says whether events are delivered to a subscription.
type SubscriptionStatus string

// Subscription statuses.
const (
	SubscriptionActive   SubscriptionStatus = "active"
	SubscriptionDisabled SubscriptionStatus = "disabled"
)

// Delivery formats of a subscription.
const (
	// FormatStandardWebhooks is the Standard Webhooks form: a body of
	// type, timestamp and data, and the webhook-* headers.
	FormatStandardWebhooks = "standard-webhooks"
	// FormatEka is the original service's form, for receivers written for
	// it: a body of event, event_time and the event's members, signed in
	// Eka-Webhook-Signature.
	FormatEka = "eka"
)

// Subscription is a webhook registration of one workspace.
type Subscription struct {
	ID          string
	WorkspaceID string
	// Endpoint is the normalised URL, queue URL or function ARN.
	Endpoint string
	// Protocol is one of "http", "https", "sqs", "lambda".
	Protocol string
	// EventNames are the selected events, read back in ascending order.
	EventNames []string
	// SigningKey is the secret deliveries are signed with, the client's
	// or the one registration generated; empty only in a row an earlier
	// version wrote (package sealed fills those). It is never returned to
	// clients but in the registration that generated it. At rest it is sealed (package
	// sealed): a store opened through package sealed takes it plain and
	// gives it plain in the deliveries it claims; its lists give it as
	// stored.
	SigningKey string
	// SigningKeyErr is why the stored signing key did not open, in a
	// delivery claimed through package sealed: the delivery is then given
	// up, never sent unsigned. It is not stored.
	SigningKeyErr error
	// PreviousSigningKey is the key SigningKey replaced (RotateSigningKey),
	// sealed and opened as SigningKey is, and PreviousKeyExpiresAt the
	// end of its grace: until then Standard Webhooks deliveries carry its
	// signature after the current key's. Both are empty when no rotation
	// is in its grace, or the last one replaced no key.
	PreviousSigningKey   string
	PreviousKeyExpiresAt time.Time
	Status               SubscriptionStatus
	// DeliveryFormat is how its deliveries are written and signed:
	// FormatStandardWebhooks ("" too), or FormatEka.
	DeliveryFormat string
	CreatedAt      time.Time
	// LastDeliveryAt and LastDeliveryOutcome describe the most recent
	// delivery attempt; zero and empty before the first one.
	LastDeliveryAt      time.Time
	LastDeliveryOutcome string
	// DisabledReason says why a disabled subscription is (DisabledGone,
	// DisabledFailing, DisabledByClient); empty while it is active.
	DisabledReason string
	// FailingSince is the start of the first failed attempt since the
	// last success, zero while the last attempt succeeded.
	FailingSince time.Time
}

// Format is the subscription's delivery format, FormatStandardWebhooks
// when none was chosen.
func (s Subscription) Format() string {
	if s.DeliveryFormat == "" {
		return FormatStandardWebhooks
	}
	return s.DeliveryFormat
}
