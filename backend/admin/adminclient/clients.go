package adminclient

import (
	"context"
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/fleet"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/internal/contract"
)

// Whoami is admin.Service.Whoami.
func (c *Client) Whoami(ctx context.Context) (admin.Person, error) {
	return get[admin.Person](ctx, c, "/whoami", nil)
}

// CreateClient is admin.Service.CreateClient.
func (c *Client) CreateClient(ctx context.Context, workspace string) (identity.Credentials, error) {
	return post[identity.Credentials](ctx, c, "/clients", map[string]string{"workspace_id": workspace}, true)
}

// ListClients is admin.Service.ListClients.
func (c *Client) ListClients(ctx context.Context, q admin.ClientQuery) (admin.Page[identity.Client], error) {
	return get[admin.Page[identity.Client]](ctx, c, "/clients", q.Values())
}

// GetClient is admin.Service.GetClient.
func (c *Client) GetClient(ctx context.Context, id string) (identity.Client, error) {
	return get[identity.Client](ctx, c, "/clients/"+url.PathEscape(id), nil)
}

// DisableClient is admin.Service.DisableClient.
func (c *Client) DisableClient(ctx context.Context, id string) (identity.Client, error) {
	return post[identity.Client](ctx, c, "/clients/"+url.PathEscape(id)+"/disable", nil, false)
}

// ListWorkspaces is admin.Service.ListWorkspaces.
func (c *Client) ListWorkspaces(ctx context.Context, q admin.PageQuery) (admin.Page[admin.Workspace], error) {
	return get[admin.Page[admin.Workspace]](ctx, c, "/workspaces", q.Values())
}

// GetWorkspace is admin.Service.GetWorkspace.
func (c *Client) GetWorkspace(ctx context.Context, id string) (admin.Workspace, error) {
	return get[admin.Workspace](ctx, c, "/workspaces/"+url.PathEscape(id), nil)
}

// RevokeCertificate is admin.Service.RevokeCertificate.
func (c *Client) RevokeCertificate(ctx context.Context, r admin.Revocation) (admin.Revocation, error) {
	return post[admin.Revocation](ctx, c, "/revocations", r, false)
}

// ListRevocations is admin.Service.ListRevocations.
func (c *Client) ListRevocations(ctx context.Context, q admin.PageQuery) (admin.Page[admin.Revocation], error) {
	return get[admin.Page[admin.Revocation]](ctx, c, "/revocations", q.Values())
}

// ListBackends is admin.Service.ListBackends.
func (c *Client) ListBackends(ctx context.Context, q admin.PageQuery) (admin.Page[fleet.Backend], error) {
	return get[admin.Page[fleet.Backend]](ctx, c, "/fleet/backends", q.Values())
}

// ListEdges is admin.Service.ListEdges.
func (c *Client) ListEdges(ctx context.Context, q admin.PageQuery) (admin.Page[fleet.Edge], error) {
	return get[admin.Page[fleet.Edge]](ctx, c, "/fleet/edges", q.Values())
}

// limitsPath is the path of the client id's limits.
func limitsPath(id string) string { return "/clients/" + url.PathEscape(id) + "/limits" }

// ClientLimits is admin.Service.ClientLimits.
func (c *Client) ClientLimits(ctx context.Context, id string) (contract.ClientLimits, error) {
	return get[contract.ClientLimits](ctx, c, limitsPath(id), nil)
}

// SetClientLimits is admin.Service.SetClientLimits.
func (c *Client) SetClientLimits(ctx context.Context, id string, l contract.Limits) (contract.ClientLimits, error) {
	var out contract.ClientLimits
	err := c.call(ctx, http.MethodPut, limitsPath(id), nil, l, &out, false)
	return out, err
}

// ClearClientLimits is admin.Service.ClearClientLimits.
func (c *Client) ClearClientLimits(ctx context.Context, id string) (contract.ClientLimits, error) {
	return del[contract.ClientLimits](ctx, c, limitsPath(id))
}
