package adminclient

import (
	"context"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin"
)

// destinationsPath is the path of the webhook destinations granted to
// workspace.
func destinationsPath(workspace string) string {
	return "/workspaces/" + url.PathEscape(workspace) + "/webhook-destinations"
}

// ListDestinations is admin.Service.ListDestinations.
func (c *Client) ListDestinations(ctx context.Context, workspace string, q admin.PageQuery) (admin.Page[admin.Destination], error) {
	return get[admin.Page[admin.Destination]](ctx, c, destinationsPath(workspace), q.Values())
}

// GrantDestination is admin.Service.GrantDestination.
func (c *Client) GrantDestination(ctx context.Context, workspace string, r admin.DestinationRequest) (admin.Destination, error) {
	return post[admin.Destination](ctx, c, destinationsPath(workspace), r, true)
}

// RevokeDestination is admin.Service.RevokeDestination.
func (c *Client) RevokeDestination(ctx context.Context, workspace, id string) (admin.Destination, error) {
	return del[admin.Destination](ctx, c, destinationsPath(workspace)+"/"+url.PathEscape(id))
}
