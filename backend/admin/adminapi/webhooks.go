package adminapi

import (
	"net/url"
	"slices"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Subscription is a webhook subscription of a workspace as the Admin API
// shows it: its workspace, and the subscription as the workspace's own
// list shows it. Its signing key is never shown, only whether it has one.
type Subscription struct {
	WorkspaceID         string     `json:"workspace_id"`
	ID                  string     `json:"id"`
	Endpoint            string     `json:"endpoint"`
	Protocol            string     `json:"protocol"`
	EventNames          []string   `json:"event_names"`
	Status              string     `json:"status"`
	HasSigningKey       bool       `json:"has_signing_key"`
	DeliveryFormat      string     `json:"delivery_format"`
	CreatedAt           time.Time  `json:"created_at"`
	LastDeliveryAt      *time.Time `json:"last_delivery_at"`
	LastDeliveryOutcome *string    `json:"last_delivery_outcome"`
	// DisabledReason says why a disabled subscription is: gone (410),
	// failing (for the disable period), client (PATCH); null while active.
	DisabledReason *string `json:"disabled_reason"`
	// FailingSince is the start of the first failed attempt since the
	// last success, null while the last attempt succeeded (or none was
	// made).
	FailingSince *time.Time `json:"failing_since"`
}

// SubscriptionStatuses are the statuses of a subscription.
var SubscriptionStatuses = []string{"active", "disabled"}

// SubscriptionQuery selects webhook subscriptions: of a workspace, of a
// status, failing or not, a page at a time in creation order.
type SubscriptionQuery struct {
	Workspace string
	Status    string
	// Failing selects the failing subscriptions only: the last attempt
	// failed (FailingSince), or a failure disabled it (DisabledReason gone
	// or failing). No index serves it: a page reads at most
	// FailingScan subscriptions, and may hold fewer than its limit, even
	// none, and still have a next one.
	Failing bool
	Cursor  string
	Limit   int
}

// FailingScan is the most subscriptions a page of failing ones reads.
const FailingScan = 10 * MaxLimit

// ParseSubscriptionQuery reads a SubscriptionQuery from the query of GET
// /admin/v1/subscriptions: workspace, status (active, disabled), failing
// (true, false), cursor, limit.
func ParseSubscriptionQuery(q url.Values) (SubscriptionQuery, error) {
	v, err := params(q, "workspace", "status", "failing", "cursor", "limit")
	if err != nil {
		return SubscriptionQuery{}, err
	}
	sq := SubscriptionQuery{Workspace: v["workspace"], Status: v["status"], Cursor: v["cursor"]}
	switch v["failing"] {
	case "", "false":
	case "true":
		sq.Failing = true
	default:
		return sq, invalid("failing must be true or false")
	}
	if err := sq.Check(); err != nil {
		return sq, err
	}
	sq.Limit, err = limitOf(v["limit"])
	return sq, err
}

// Check refuses a query the list does not take, from the API or the
// command line alike.
func (q SubscriptionQuery) Check() error {
	switch {
	case q.Workspace != "" && !contract.ValidID(q.Workspace):
		return invalid("workspace is not a workspace id")
	case q.Status != "" && !slices.Contains(SubscriptionStatuses, q.Status):
		return invalid("status must be active or disabled")
	}
	return checkLimit(q.Limit)
}

// Values returns q as query parameters, ParseSubscriptionQuery's inverse.
func (q SubscriptionQuery) Values() url.Values {
	failing := ""
	if q.Failing {
		failing = "true"
	}
	return values("workspace", q.Workspace, "status", q.Status, "failing", failing, "cursor", q.Cursor, "limit", limitValue(q.Limit))
}

// Destination is a private receiver granted to a workspace, as the API
// shows one: what one workspace's webhooks may reach although the SSRF
// guard refuses it to every other.
type Destination struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// Prefix is the addresses granted, a /32 or /128 for one address.
	Prefix string `json:"prefix"`
	// Port is the port granted, null for every port.
	Port      *int      `json:"port"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
	// RevokedAt and RevokedBy are null while the grant is in force.
	RevokedAt *time.Time `json:"revoked_at"`
	RevokedBy *string    `json:"revoked_by"`
}

// DestinationRequest is the body of a grant: an address or prefix, and a
// port (absent or null for every port).
type DestinationRequest struct {
	Prefix string `json:"prefix"`
	Port   *int   `json:"port"`
}

// Delivery is a delivery of a subscription's events, as its log shows it.
type Delivery struct {
	ID string `json:"id"`
	// EventID is the webhook-id sent, the same on every attempt.
	EventID       string     `json:"event_id"`
	EventType     string     `json:"event_type"`
	Status        string     `json:"status"`
	CreatedAt     time.Time  `json:"created_at"`
	DeliveredAt   *time.Time `json:"delivered_at"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	LastOutcome   *string    `json:"last_outcome"`
}

// DeliveryPage is a page of the delivery log; Next is the cursor of the
// following page, null on the last.
type DeliveryPage struct {
	Deliveries []Delivery `json:"deliveries"`
	Next       *string    `json:"next"`
}

// Attempt is one attempt of a delivery: the endpoint's HTTP status (null
// when it did not answer), the outcome (http_503, timeout, dns_error, …)
// and the start of its answer.
type Attempt struct {
	Number       int       `json:"number"`
	StartedAt    time.Time `json:"started_at"`
	DurationMS   int64     `json:"duration_ms"`
	StatusCode   *int      `json:"status_code"`
	Outcome      string    `json:"outcome"`
	ResponseBody *string   `json:"response_body"`
}

// DeliveryDetail is a delivery with its attempts, in order.
type DeliveryDetail struct {
	Delivery
	AttemptList []Attempt `json:"attempt_list"`
}

// DeliveryStatuses are the statuses of the delivery log.
var DeliveryStatuses = []string{"pending", "delivered", "failed", "given_up"}

// DeliveryQuery selects deliveries of a subscription's log, newest first,
// by the parameters of GET /admin/v1/subscriptions/{id}/deliveries as the
// API takes them: status (DeliveryStatuses), event_type, since and until
// (RFC 3339), cursor, and limit (0: the log's default). The backend reads
// them as a client's delivery log does, and refuses what it refuses.
type DeliveryQuery struct {
	Status, EventType, Since, Until, Cursor string
	Limit                                   int
}

// Values returns q as query parameters.
func (q DeliveryQuery) Values() url.Values {
	return values("status", q.Status, "event_type", q.EventType, "since", q.Since, "until", q.Until,
		"cursor", q.Cursor, "limit", limitValue(q.Limit))
}

// RecoverRequest is the body of POST /admin/v1/subscriptions/{id}/recover:
// the time (RFC 3339) from which failed deliveries are sent again.
type RecoverRequest struct {
	Since string `json:"since"`
}

// Recovered is the answer of a recovery: how many deliveries it made due.
type Recovered struct {
	Recovered int `json:"recovered"`
}

// TestEvent is how a test event sent to a subscription went: its
// webhook-id, the attempt's outcome (delivered, http_NNN, timeout,
// address_refused, …), the receiver's status (0 when it did not answer)
// and how long the attempt took; as the public API's test event answers.
type TestEvent struct {
	EventID    string `json:"event_id"`
	Outcome    string `json:"outcome"`
	Status     int    `json:"status,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}
