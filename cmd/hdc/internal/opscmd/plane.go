package opscmd

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminclient"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/fleet"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/operator"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
)

// plane is what an operator's command asks of the gateway: the Admin
// API's service on the database directly (direct mode, admin.Service), or
// the Admin API (remote mode, adminclient.Client). Both answer alike, so
// that a command prints the same either way.
type plane interface {
	Whoami(ctx context.Context) (admin.Person, error)
	CreateClient(ctx context.Context, workspace string) (identity.Credentials, error)
	ListClients(ctx context.Context, q admin.ClientQuery) (admin.Page[identity.Client], error)
	DisableClient(ctx context.Context, id string) (identity.Client, error)
	ClientLimits(ctx context.Context, id string) (contract.ClientLimits, error)
	SetClientLimits(ctx context.Context, id string, l contract.Limits) (contract.ClientLimits, error)
	ClearClientLimits(ctx context.Context, id string) (contract.ClientLimits, error)
	ListWorkspaces(ctx context.Context, q admin.PageQuery) (admin.Page[admin.Workspace], error)
	RevokeCertificate(ctx context.Context, r admin.Revocation) (admin.Revocation, error)
	ListRevocations(ctx context.Context, q admin.PageQuery) (admin.Page[admin.Revocation], error)
	ListBackends(ctx context.Context, q admin.PageQuery) (admin.Page[fleet.Backend], error)
	ListEdges(ctx context.Context, q admin.PageQuery) (admin.Page[fleet.Edge], error)
	ListKeys(ctx context.Context, q admin.KeyQuery) (admin.Page[admin.Key], error)
	GetKey(ctx context.Context, kid string) (admin.Key, error)
	AddKey(ctx context.Context, client string, r admin.AddKeyRequest) (admin.IssuedKey, error)
	RotateKey(ctx context.Context, client string, r admin.RotateKeyRequest) (admin.Rotation, error)
	RetireKey(ctx context.Context, kid string, r admin.RetireKeyRequest) (admin.Retirement, error)
	CreateGrant(ctx context.Context, workspace, client string) (identity.Grant, error)
	ListGrants(ctx context.Context, q admin.GrantQuery) (admin.Page[identity.GrantInfo], error)
	RevokeGrant(ctx context.Context, id string) (identity.GrantInfo, error)
	ListSubscriptions(ctx context.Context, q admin.SubscriptionQuery) (admin.Page[admin.Subscription], error)
	GetSubscription(ctx context.Context, id string) (admin.Subscription, error)
	DeleteSubscription(ctx context.Context, id string) (admin.Subscription, error)
	ListDestinations(ctx context.Context, workspace string, q admin.PageQuery) (admin.Page[admin.Destination], error)
	GrantDestination(ctx context.Context, workspace string, r admin.DestinationRequest) (admin.Destination, error)
	RevokeDestination(ctx context.Context, workspace, id string) (admin.Destination, error)
	ListDeliveries(ctx context.Context, id string, f store.DeliveryFilter) (webhook.DeliveryPage, error)
	GetDelivery(ctx context.Context, id, deliveryID string) (webhook.DeliveryDetail, error)
	Redeliver(ctx context.Context, id, deliveryID string) (webhook.Delivery, error)
	RecoverDeliveries(ctx context.Context, id string, since time.Time) (webhook.Recovered, error)
	SearchAudit(ctx context.Context, q trail.Query) (admin.Page[json.RawMessage], error)
	ExportAudit(ctx context.Context, q trail.Query, w io.Writer) error
	VerifyAudit(ctx context.Context) (trail.Report, error)
}

var (
	_ plane = (*admin.Service)(nil)
	_ plane = (*adminclient.Client)(nil)
)

// adminFlags locate the Admin API and the person's certificate that
// calls it: remote mode, when URL is set.
type adminFlags struct {
	URL, Cert, Key, CA string
	// Direct opens the database even where hdc up's AdminFile names an
	// API: break-glass, when the API does not answer.
	Direct bool
}

// register adds --admin, --cert, --key and --ca to fs, defaulting to
// HDC_ADMIN_URL, HDC_ADMIN_CERT, HDC_ADMIN_KEY and HDC_ADMIN_CA.
func (f *adminFlags) register(fs *pflag.FlagSet) {
	cli.EnvStringVar(fs, &f.URL, "admin", "HDC_ADMIN_URL", "",
		"the Admin API's `url`, https://backend:9081 (the backend's internal listener): the command asks the API, with a person's certificate, instead of opening the database")
	cli.EnvStringVar(fs, &f.Cert, "cert", "HDC_ADMIN_CERT", "", "PEM `file` of your certificate for the Admin API (hdc tls issue --role operator|auditor --name you@example.org)")
	cli.EnvStringVar(fs, &f.Key, "key", "HDC_ADMIN_KEY", "", "PEM `file` of your certificate's private key")
	cli.EnvStringVar(fs, &f.CA, "ca", "HDC_ADMIN_CA", "", "PEM `file` of the hop's authority, which issued the backend's certificate")
	fs.BoolVar(&f.Direct, "direct", false, "open the database (--db, --data) even where a running hdc up left its "+AdminFile+" in --data: break-glass")
}

// chooseAdmin fills the Admin API's flags from the data directory's
// AdminFile when neither --db nor --direct asks for direct mode.
func (f *storeFlags) chooseAdmin() error {
	if f.Admin.Direct || f.URL != "" {
		return nil
	}
	_, err := f.Admin.discover(f.DataDir)
	return err
}

// remoteMode reports whether the flags ask the Admin API.
func (f *adminFlags) remoteMode() bool { return f.URL != "" && !f.Direct }

// remote returns the client of the Admin API the flags name.
func (f *adminFlags) remote() (*adminclient.Client, error) {
	cfg, err := pki.ClientTLS(f.Cert, f.Key, f.CA)
	if err != nil {
		return nil, err
	}
	return adminclient.New(f.URL, cfg)
}

// withPlane runs fn with the plane the flags choose: the Admin API when
// --admin names it or, with no --db, --admin or --direct, when the data
// directory holds a running hdc up's AdminFile; else the database the
// store flags locate, opened here, in the name of the local user
// (operator.Person).
func (f *storeFlags) withPlane(cmd *cobra.Command, fn func(context.Context, plane) error) error {
	if err := f.chooseAdmin(); err != nil {
		return err
	}
	if f.Admin.remoteMode() {
		c, err := f.Admin.remote()
		if err != nil {
			return err
		}
		defer c.Close()
		return fn(cmd.Context(), c)
	}
	st, err := f.Open(cmd.Context())
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(direct(cmd.Context(), st))
}

// direct returns the plane of direct mode over st, and ctx in the name of
// the local user (operator.Person).
func direct(ctx context.Context, st *sealed.Store, opts ...admin.Option) (context.Context, *admin.Service) {
	return audit.WithPerson(ctx, operator.Person()), admin.New(st, identity.New(st, 1), keyadmin.New(st), opts...)
}
