package adminclient

import (
	"context"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin"
)

// ListKeys is admin.Service.ListKeys.
func (c *Client) ListKeys(ctx context.Context, q admin.KeyQuery) (admin.Page[admin.Key], error) {
	return get[admin.Page[admin.Key]](ctx, c, "/keys", q.Values())
}

// GetKey is admin.Service.GetKey.
func (c *Client) GetKey(ctx context.Context, kid string) (admin.Key, error) {
	return get[admin.Key](ctx, c, "/keys/"+url.PathEscape(kid), nil)
}

// AddKey is admin.Service.AddKey, sent under an Idempotency-Key.
func (c *Client) AddKey(ctx context.Context, client string, r admin.AddKeyRequest) (admin.IssuedKey, error) {
	return post[admin.IssuedKey](ctx, c, "/clients/"+url.PathEscape(client)+"/keys", r, true)
}

// RotateKey is admin.Service.RotateKey, sent under an Idempotency-Key.
func (c *Client) RotateKey(ctx context.Context, client string, r admin.RotateKeyRequest) (admin.Rotation, error) {
	return post[admin.Rotation](ctx, c, "/clients/"+url.PathEscape(client)+"/keys/rotate", r, true)
}

// RetireKey is admin.Service.RetireKey.
func (c *Client) RetireKey(ctx context.Context, kid string, r admin.RetireKeyRequest) (admin.Retirement, error) {
	return post[admin.Retirement](ctx, c, "/keys/"+url.PathEscape(kid)+"/retire", r, false)
}
