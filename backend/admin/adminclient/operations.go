package adminclient

import (
	"context"
	"io"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// The operations of adminapi.API, each a request its route in the table
// describes, named by the operation.

var _ adminapi.API = (*Client)(nil)

// Whoami is adminapi.API.Whoami.
func (c *Client) Whoami(ctx context.Context) (adminapi.Person, error) {
	return call[adminapi.Person](ctx, c, "Whoami", nil, nil)
}

// ListBackends is adminapi.API.ListBackends.
func (c *Client) ListBackends(ctx context.Context, q adminapi.PageQuery) (adminapi.Page[adminapi.Backend], error) {
	return call[adminapi.Page[adminapi.Backend]](ctx, c, "ListBackends", q.Values(), nil)
}

// ListEdges is adminapi.API.ListEdges.
func (c *Client) ListEdges(ctx context.Context, q adminapi.PageQuery) (adminapi.Page[adminapi.Edge], error) {
	return call[adminapi.Page[adminapi.Edge]](ctx, c, "ListEdges", q.Values(), nil)
}

// FleetStatus is adminapi.API.FleetStatus.
func (c *Client) FleetStatus(ctx context.Context) (adminapi.FleetStatus, error) {
	return call[adminapi.FleetStatus](ctx, c, "FleetStatus", nil, nil)
}

// ListWorkspaces is adminapi.API.ListWorkspaces.
func (c *Client) ListWorkspaces(ctx context.Context, q adminapi.PageQuery) (adminapi.Page[adminapi.Workspace], error) {
	return call[adminapi.Page[adminapi.Workspace]](ctx, c, "ListWorkspaces", q.Values(), nil)
}

// GetWorkspace is adminapi.API.GetWorkspace.
func (c *Client) GetWorkspace(ctx context.Context, id string) (adminapi.Workspace, error) {
	return call[adminapi.Workspace](ctx, c, "GetWorkspace", nil, nil, id)
}

// ListDestinations is adminapi.API.ListDestinations.
func (c *Client) ListDestinations(ctx context.Context, workspace string, q adminapi.PageQuery) (adminapi.Page[adminapi.Destination], error) {
	return call[adminapi.Page[adminapi.Destination]](ctx, c, "ListDestinations", q.Values(), nil, workspace)
}

// GrantDestination is adminapi.API.GrantDestination.
func (c *Client) GrantDestination(ctx context.Context, workspace string, r adminapi.DestinationRequest) (adminapi.Destination, error) {
	return call[adminapi.Destination](ctx, c, "GrantDestination", nil, r, workspace)
}

// RevokeDestination is adminapi.API.RevokeDestination.
func (c *Client) RevokeDestination(ctx context.Context, workspace, id string) (adminapi.Destination, error) {
	return call[adminapi.Destination](ctx, c, "RevokeDestination", nil, nil, workspace, id)
}

// ListClients is adminapi.API.ListClients.
func (c *Client) ListClients(ctx context.Context, q adminapi.ClientQuery) (adminapi.Page[adminapi.Client], error) {
	return call[adminapi.Page[adminapi.Client]](ctx, c, "ListClients", q.Values(), nil)
}

// CreateClient is adminapi.API.CreateClient.
func (c *Client) CreateClient(ctx context.Context, r adminapi.CreateClientRequest) (adminapi.Credentials, error) {
	return call[adminapi.Credentials](ctx, c, "CreateClient", nil, r)
}

// GetClient is adminapi.API.GetClient.
func (c *Client) GetClient(ctx context.Context, id string) (adminapi.Client, error) {
	return call[adminapi.Client](ctx, c, "GetClient", nil, nil, id)
}

// UpdateClient is adminapi.API.UpdateClient.
func (c *Client) UpdateClient(ctx context.Context, id string, r adminapi.UpdateClientRequest) (adminapi.Client, error) {
	return call[adminapi.Client](ctx, c, "UpdateClient", nil, r, id)
}

// DisableClient is adminapi.API.DisableClient.
func (c *Client) DisableClient(ctx context.Context, id string) (adminapi.Client, error) {
	return call[adminapi.Client](ctx, c, "DisableClient", nil, nil, id)
}

// ClientLimits is adminapi.API.ClientLimits.
func (c *Client) ClientLimits(ctx context.Context, id string) (contract.ClientLimits, error) {
	return call[contract.ClientLimits](ctx, c, "ClientLimits", nil, nil, id)
}

// SetClientLimits is adminapi.API.SetClientLimits.
func (c *Client) SetClientLimits(ctx context.Context, id string, l contract.Limits) (contract.ClientLimits, error) {
	return call[contract.ClientLimits](ctx, c, "SetClientLimits", nil, l, id)
}

// ClearClientLimits is adminapi.API.ClearClientLimits.
func (c *Client) ClearClientLimits(ctx context.Context, id string) (contract.ClientLimits, error) {
	return call[contract.ClientLimits](ctx, c, "ClearClientLimits", nil, nil, id)
}

// ListKeys is adminapi.API.ListKeys.
func (c *Client) ListKeys(ctx context.Context, q adminapi.KeyQuery) (adminapi.Page[adminapi.KeyInfo], error) {
	return call[adminapi.Page[adminapi.KeyInfo]](ctx, c, "ListKeys", q.Values(), nil)
}

// GetKey is adminapi.API.GetKey.
func (c *Client) GetKey(ctx context.Context, kid string) (adminapi.KeyInfo, error) {
	return call[adminapi.KeyInfo](ctx, c, "GetKey", nil, nil, kid)
}

// RetireKey is adminapi.API.RetireKey.
func (c *Client) RetireKey(ctx context.Context, kid string, r adminapi.RetireKeyRequest) (adminapi.Retirement, error) {
	return call[adminapi.Retirement](ctx, c, "RetireKey", nil, r, kid)
}

// AddKey is adminapi.API.AddKey.
func (c *Client) AddKey(ctx context.Context, client string, r adminapi.AddKeyRequest) (adminapi.IssuedKey, error) {
	return call[adminapi.IssuedKey](ctx, c, "AddKey", nil, r, client)
}

// RotateKey is adminapi.API.RotateKey.
func (c *Client) RotateKey(ctx context.Context, client string, r adminapi.RotateKeyRequest) (adminapi.Rotation, error) {
	return call[adminapi.Rotation](ctx, c, "RotateKey", nil, r, client)
}

// ListRevocations is adminapi.API.ListRevocations.
func (c *Client) ListRevocations(ctx context.Context, q adminapi.PageQuery) (adminapi.Page[adminapi.Revocation], error) {
	return call[adminapi.Page[adminapi.Revocation]](ctx, c, "ListRevocations", q.Values(), nil)
}

// RevokeCertificate is adminapi.API.RevokeCertificate.
func (c *Client) RevokeCertificate(ctx context.Context, r adminapi.Revocation) (adminapi.Revocation, error) {
	return call[adminapi.Revocation](ctx, c, "RevokeCertificate", nil, r)
}

// ListPeople is adminapi.API.ListPeople.
func (c *Client) ListPeople(ctx context.Context, q adminapi.PageQuery) (adminapi.Page[adminapi.PersonSeen], error) {
	return call[adminapi.Page[adminapi.PersonSeen]](ctx, c, "ListPeople", q.Values(), nil)
}

// ListGrants is adminapi.API.ListGrants.
func (c *Client) ListGrants(ctx context.Context, q adminapi.GrantQuery) (adminapi.Page[adminapi.Grant], error) {
	return call[adminapi.Page[adminapi.Grant]](ctx, c, "ListGrants", q.Values(), nil)
}

// CreateGrant is adminapi.API.CreateGrant.
func (c *Client) CreateGrant(ctx context.Context, workspace, client string) (adminapi.IssuedGrant, error) {
	return call[adminapi.IssuedGrant](ctx, c, "CreateGrant", nil, adminapi.CreateGrantRequest{WorkspaceID: workspace, ClientID: client})
}

// GetGrant is adminapi.API.GetGrant.
func (c *Client) GetGrant(ctx context.Context, id string) (adminapi.Grant, error) {
	return call[adminapi.Grant](ctx, c, "GetGrant", nil, nil, id)
}

// RevokeGrant is adminapi.API.RevokeGrant.
func (c *Client) RevokeGrant(ctx context.Context, id string) (adminapi.Grant, error) {
	return call[adminapi.Grant](ctx, c, "RevokeGrant", nil, nil, id)
}

// ListSubscriptions is adminapi.API.ListSubscriptions.
func (c *Client) ListSubscriptions(ctx context.Context, q adminapi.SubscriptionQuery) (adminapi.Page[adminapi.Subscription], error) {
	return call[adminapi.Page[adminapi.Subscription]](ctx, c, "ListSubscriptions", q.Values(), nil)
}

// GetSubscription is adminapi.API.GetSubscription.
func (c *Client) GetSubscription(ctx context.Context, id string) (adminapi.Subscription, error) {
	return call[adminapi.Subscription](ctx, c, "GetSubscription", nil, nil, id)
}

// DeleteSubscription is adminapi.API.DeleteSubscription.
func (c *Client) DeleteSubscription(ctx context.Context, id string) (adminapi.Subscription, error) {
	return call[adminapi.Subscription](ctx, c, "DeleteSubscription", nil, nil, id)
}

// EnableSubscription is adminapi.API.EnableSubscription.
func (c *Client) EnableSubscription(ctx context.Context, id string) (adminapi.Subscription, error) {
	return call[adminapi.Subscription](ctx, c, "EnableSubscription", nil, nil, id)
}

// TestSubscription is adminapi.API.TestSubscription.
func (c *Client) TestSubscription(ctx context.Context, id string) (adminapi.TestEvent, error) {
	return call[adminapi.TestEvent](ctx, c, "TestSubscription", nil, nil, id)
}

// ListDeliveries is adminapi.API.ListDeliveries.
func (c *Client) ListDeliveries(ctx context.Context, id string, q adminapi.DeliveryQuery) (adminapi.DeliveryPage, error) {
	return call[adminapi.DeliveryPage](ctx, c, "ListDeliveries", q.Values(), nil, id)
}

// GetDelivery is adminapi.API.GetDelivery.
func (c *Client) GetDelivery(ctx context.Context, id, deliveryID string) (adminapi.DeliveryDetail, error) {
	return call[adminapi.DeliveryDetail](ctx, c, "GetDelivery", nil, nil, id, deliveryID)
}

// Redeliver is adminapi.API.Redeliver.
func (c *Client) Redeliver(ctx context.Context, id, deliveryID string) (adminapi.Delivery, error) {
	return call[adminapi.Delivery](ctx, c, "Redeliver", nil, nil, id, deliveryID)
}

// RecoverDeliveries is adminapi.API.RecoverDeliveries.
func (c *Client) RecoverDeliveries(ctx context.Context, id string, since time.Time) (adminapi.Recovered, error) {
	return call[adminapi.Recovered](ctx, c, "RecoverDeliveries", nil, adminapi.RecoverRequest{Since: since.UTC().Format(time.RFC3339Nano)}, id)
}

// SearchAudit is adminapi.API.SearchAudit.
func (c *Client) SearchAudit(ctx context.Context, q adminapi.AuditQuery) (adminapi.AuditPage, error) {
	return call[adminapi.AuditPage](ctx, c, "SearchAudit", q.Values(), nil)
}

// ExportAudit is adminapi.API.ExportAudit: the export streamed to w as
// the API writes it. An export the API broke off fails.
func (c *Client) ExportAudit(ctx context.Context, q adminapi.AuditQuery, w io.Writer) error {
	return c.stream(ctx, "ExportAudit", q.Values(), w)
}

// VerifyAudit is adminapi.API.VerifyAudit: the backend verifies against
// its own checkpoints and retention. With the problem no_checkpoint, the
// report holds the trails the backend verified without one.
func (c *Client) VerifyAudit(ctx context.Context) (adminapi.AuditReport, error) {
	a, err := call[verifyAnswer](ctx, c, "VerifyAudit", nil, nil)
	return a.AuditReport, err
}

// verifyAnswer is a verification's answer: a report, or the problem
// no_checkpoint, whose member "trails" it reads.
type verifyAnswer struct{ adminapi.AuditReport }

func (*verifyAnswer) extends(code string) bool { return code == problem.CodeNoCheckpoint }
