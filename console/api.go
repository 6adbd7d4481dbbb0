package console

import (
	"context"
	"encoding/json"
	"time"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminclient"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/fleet"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
)

// API is what the console asks of the Admin API: the methods of its client
// that the pages call.
type API interface {
	Whoami(ctx context.Context) (admin.Person, error)
	ListBackends(ctx context.Context, q admin.PageQuery) (admin.Page[fleet.Backend], error)
	ListEdges(ctx context.Context, q admin.PageQuery) (admin.Page[fleet.Edge], error)
	FleetStatus(ctx context.Context) (admin.FleetStatus, error)
	ListClients(ctx context.Context, q admin.ClientQuery) (admin.Page[identity.Client], error)
	GetClient(ctx context.Context, id string) (identity.Client, error)
	CreateClient(ctx context.Context, workspace string) (identity.Credentials, error)
	DisableClient(ctx context.Context, id string) (identity.Client, error)
	ClientLimits(ctx context.Context, id string) (contract.ClientLimits, error)
	ListKeys(ctx context.Context, q admin.KeyQuery) (admin.Page[admin.Key], error)
	GetKey(ctx context.Context, kid string) (admin.Key, error)
	AddKey(ctx context.Context, client string, r admin.AddKeyRequest) (admin.IssuedKey, error)
	RotateKey(ctx context.Context, client string, r admin.RotateKeyRequest) (admin.Rotation, error)
	RetireKey(ctx context.Context, kid string, r admin.RetireKeyRequest) (admin.Retirement, error)
	ListGrants(ctx context.Context, q admin.GrantQuery) (admin.Page[identity.GrantInfo], error)
	ListSubscriptions(ctx context.Context, q admin.SubscriptionQuery) (admin.Page[admin.Subscription], error)
	GetSubscription(ctx context.Context, id string) (admin.Subscription, error)
	DeleteSubscription(ctx context.Context, id string) (admin.Subscription, error)
	ListDeliveries(ctx context.Context, id string, f store.DeliveryFilter) (webhook.DeliveryPage, error)
	GetDelivery(ctx context.Context, id, deliveryID string) (webhook.DeliveryDetail, error)
	Redeliver(ctx context.Context, id, deliveryID string) (webhook.Delivery, error)
	RecoverDeliveries(ctx context.Context, id string, since time.Time) (webhook.Recovered, error)
	SearchAudit(ctx context.Context, q trail.Query) (admin.Page[json.RawMessage], error)
	VerifyAudit(ctx context.Context) (trail.Report, error)
}

var _ API = (*adminclient.Client)(nil)
