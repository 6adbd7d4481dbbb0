package adminclient

import (
	"context"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/identity"
)

// ListGrants is admin.Service.ListGrants.
func (c *Client) ListGrants(ctx context.Context, q admin.GrantQuery) (admin.Page[identity.GrantInfo], error) {
	return get[admin.Page[identity.GrantInfo]](ctx, c, "/grants", q.Values())
}

// GetGrant is admin.Service.GetGrant.
func (c *Client) GetGrant(ctx context.Context, id string) (identity.GrantInfo, error) {
	return get[identity.GrantInfo](ctx, c, "/grants/"+url.PathEscape(id), nil)
}

// CreateGrant is admin.Service.CreateGrant.
func (c *Client) CreateGrant(ctx context.Context, workspace, client string) (identity.Grant, error) {
	return post[identity.Grant](ctx, c, "/grants", map[string]string{"workspace_id": workspace, "client_id": client}, true)
}

// RevokeGrant is admin.Service.RevokeGrant.
func (c *Client) RevokeGrant(ctx context.Context, id string) (identity.GrantInfo, error) {
	return post[identity.GrantInfo](ctx, c, "/grants/"+url.PathEscape(id)+"/revoke", nil, false)
}
