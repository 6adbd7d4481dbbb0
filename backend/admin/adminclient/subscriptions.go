package adminclient

import (
	"context"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin"
)

// ListSubscriptions is admin.Service.ListSubscriptions.
func (c *Client) ListSubscriptions(ctx context.Context, q admin.SubscriptionQuery) (admin.Page[admin.Subscription], error) {
	return get[admin.Page[admin.Subscription]](ctx, c, "/subscriptions", q.Values())
}

// GetSubscription is admin.Service.GetSubscription.
func (c *Client) GetSubscription(ctx context.Context, id string) (admin.Subscription, error) {
	return get[admin.Subscription](ctx, c, "/subscriptions/"+url.PathEscape(id), nil)
}

// DeleteSubscription is admin.Service.DeleteSubscription.
func (c *Client) DeleteSubscription(ctx context.Context, id string) (admin.Subscription, error) {
	return del[admin.Subscription](ctx, c, "/subscriptions/"+url.PathEscape(id))
}
