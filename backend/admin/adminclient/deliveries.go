package adminclient

import (
	"context"
	"net/url"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// deliveriesPath is the path of subscription id's delivery log.
func deliveriesPath(id string) string { return "/subscriptions/" + url.PathEscape(id) + "/deliveries" }

// ListDeliveries is admin.Service.ListDeliveries.
func (c *Client) ListDeliveries(ctx context.Context, id string, f store.DeliveryFilter) (webhook.DeliveryPage, error) {
	return get[webhook.DeliveryPage](ctx, c, deliveriesPath(id), webhook.DeliveryQueryValues(f))
}

// GetDelivery is admin.Service.GetDelivery.
func (c *Client) GetDelivery(ctx context.Context, id, deliveryID string) (webhook.DeliveryDetail, error) {
	return get[webhook.DeliveryDetail](ctx, c, deliveriesPath(id)+"/"+url.PathEscape(deliveryID), nil)
}

// Redeliver is admin.Service.Redeliver.
func (c *Client) Redeliver(ctx context.Context, id, deliveryID string) (webhook.Delivery, error) {
	return post[webhook.Delivery](ctx, c, deliveriesPath(id)+"/"+url.PathEscape(deliveryID)+"/redeliver", nil, true)
}

// RecoverDeliveries is admin.Service.RecoverDeliveries.
func (c *Client) RecoverDeliveries(ctx context.Context, id string, since time.Time) (webhook.Recovered, error) {
	return post[webhook.Recovered](ctx, c, "/subscriptions/"+url.PathEscape(id)+"/recover",
		webhook.RecoverRequest{Since: since.UTC().Format(time.RFC3339Nano)}, true)
}
