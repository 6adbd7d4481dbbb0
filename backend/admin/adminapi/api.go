package adminapi

import (
	"context"
	"io"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// API is every operation of the Admin API, each the method its route in
// the table (Routes) is named after. Each acts for the person of its
// caller: the certificate's over the API, the local user's in hdc's direct
// mode. A refusal is a *problem.Problem with a stable code.
type API interface {
	// Whoami returns the person the API takes its caller for.
	Whoami(ctx context.Context) (Person, error)

	// ListBackends returns a page of the backends that beat within the
	// fleet's bound, by id.
	ListBackends(ctx context.Context, q PageQuery) (Page[Backend], error)
	// ListEdges returns a page of the edges that reported within the
	// fleet's bound, by id.
	ListEdges(ctx context.Context, q PageQuery) (Page[Edge], error)
	// FleetStatus returns the webhook outbox's queue and the newest audit
	// checkpoint.
	FleetStatus(ctx context.Context) (FleetStatus, error)

	// ListWorkspaces returns a page of the workspaces, by id.
	ListWorkspaces(ctx context.Context, q PageQuery) (Page[Workspace], error)
	// GetWorkspace returns the workspace id.
	GetWorkspace(ctx context.Context, id string) (Workspace, error)
	// ListDestinations returns a page of the private webhook receivers
	// granted to the workspace, revoked ones too, oldest first.
	ListDestinations(ctx context.Context, workspace string, q PageQuery) (Page[Destination], error)
	// GrantDestination grants the workspace the private receiver r names.
	GrantDestination(ctx context.Context, workspace string, r DestinationRequest) (Destination, error)
	// RevokeDestination revokes the workspace's grant id.
	RevokeDestination(ctx context.Context, workspace, id string) (Destination, error)

	// ListClients returns a page of the clients q selects.
	ListClients(ctx context.Context, q ClientQuery) (Page[Client], error)
	// CreateClient creates a client of r's workspace (and the workspace
	// when it does not exist), with r's name and labels, and returns its
	// credentials, its secret shown once.
	CreateClient(ctx context.Context, r CreateClientRequest) (Credentials, error)
	// GetClient returns the client id, without its secret.
	GetClient(ctx context.Context, id string) (Client, error)
	// UpdateClient changes the client id's name and labels as r says and
	// returns it as it is then.
	UpdateClient(ctx context.Context, id string, r UpdateClientRequest) (Client, error)
	// DisableClient stops the client id from logging in and refreshing.
	DisableClient(ctx context.Context, id string) (Client, error)
	// ClientLimits returns the client id's overrides of the edges'
	// default limits.
	ClientLimits(ctx context.Context, id string) (contract.ClientLimits, error)
	// SetClientLimits makes l the client id's overrides.
	SetClientLimits(ctx context.Context, id string, l contract.Limits) (contract.ClientLimits, error)
	// ClearClientLimits removes the client id's overrides.
	ClearClientLimits(ctx context.Context, id string) (contract.ClientLimits, error)

	// The clients' keys.
	Keys

	// ListRevocations returns a page of the deny-list, in serial order.
	ListRevocations(ctx context.Context, q PageQuery) (Page[Revocation], error)
	// RevokeCertificate puts the certificate r.Serial on the deny-list.
	RevokeCertificate(ctx context.Context, r Revocation) (Revocation, error)
	// ListPeople returns a page of the certificates that used the Admin
	// API, by name then serial, each with whether it is revoked.
	ListPeople(ctx context.Context, q PageQuery) (Page[PersonSeen], error)

	// ListGrants returns a page of the sharing grants q selects.
	ListGrants(ctx context.Context, q GrantQuery) (Page[Grant], error)
	// CreateGrant lets client act in workspace, its sharing key shown
	// once.
	CreateGrant(ctx context.Context, workspace, client string) (IssuedGrant, error)
	// GetGrant returns the sharing grant id, without its key.
	GetGrant(ctx context.Context, id string) (Grant, error)
	// RevokeGrant revokes the sharing grant id.
	RevokeGrant(ctx context.Context, id string) (Grant, error)

	// ListSubscriptions returns a page of the webhook subscriptions q
	// selects.
	ListSubscriptions(ctx context.Context, q SubscriptionQuery) (Page[Subscription], error)
	// GetSubscription returns the webhook subscription id.
	GetSubscription(ctx context.Context, id string) (Subscription, error)
	// DeleteSubscription deletes the webhook subscription id with its
	// deliveries, and returns it as it was.
	DeleteSubscription(ctx context.Context, id string) (Subscription, error)
	// EnableSubscription turns the disabled webhook subscription id back
	// on, its kept deliveries due at once, and returns it.
	EnableSubscription(ctx context.Context, id string) (Subscription, error)
	// TestSubscription sends the webhook subscription id a test event now,
	// and says how the attempt went.
	TestSubscription(ctx context.Context, id string) (TestEvent, error)
	// ListDeliveries returns a page of the subscription id's delivery log.
	ListDeliveries(ctx context.Context, id string, q DeliveryQuery) (DeliveryPage, error)
	// GetDelivery returns a delivery of the subscription id with its
	// attempts.
	GetDelivery(ctx context.Context, id, deliveryID string) (DeliveryDetail, error)
	// Redeliver sends a delivery of the subscription id again, with its
	// webhook-id.
	Redeliver(ctx context.Context, id, deliveryID string) (Delivery, error)
	// RecoverDeliveries sends again every delivery of the subscription id
	// that failed or was given up since since.
	RecoverDeliveries(ctx context.Context, id string, since time.Time) (Recovered, error)

	// SearchAudit returns a page of the audit records q selects.
	SearchAudit(ctx context.Context, q AuditQuery) (AuditPage, error)
	// ExportAudit writes the audit records q selects to w as FHIR
	// AuditEvent NDJSON.
	ExportAudit(ctx context.Context, q AuditQuery, w io.Writer) error
	// VerifyAudit verifies every audit trail; with the problem
	// no_checkpoint (AsNoCheckpoint), the report holds the trails
	// verified without a checkpoint.
	VerifyAudit(ctx context.Context) (AuditReport, error)
}

// Keys are the operations of the Admin API on the clients' keys. Both
// implementations of API have them, and a registry file's key
// administration (backend/keyadmin/registryadmin) implements them alone,
// so that hdc keys asks the database's keys and a file's alike.
type Keys interface {
	// ListKeys returns a page of the keys q selects, in kid order, each
	// with its last use at any edge.
	ListKeys(ctx context.Context, q KeyQuery) (Page[KeyInfo], error)
	// GetKey returns the key kid, without its secret.
	GetKey(ctx context.Context, kid string) (KeyInfo, error)
	// RetireKey retires the key kid, or says what that would do.
	RetireKey(ctx context.Context, kid string, r RetireKeyRequest) (Retirement, error)
	// AddKey adds an active key for client, its secret shown once.
	AddKey(ctx context.Context, client string, r AddKeyRequest) (IssuedKey, error)
	// RotateKey gives client a new active key and moves its active keys
	// to retiring, or says what that would do.
	RotateKey(ctx context.Context, client string, r RotateKeyRequest) (Rotation, error)
}
