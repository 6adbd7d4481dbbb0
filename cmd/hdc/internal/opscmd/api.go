package opscmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/admin/adminclient"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/pki"
)

// adminFlags locate the Admin API and the person's certificate that
// calls it: remote mode, when URL is set.
type adminFlags struct {
	URL, Cert, Key, CA string
	// Timeout bounds each attempt on a backend (adminclient.New), a
	// duration such as 2s.
	Timeout string
	// Direct opens the database even where hdc up's AdminFile names an
	// API: break-glass, when the API does not answer.
	Direct bool
}

// register adds --admin, --cert, --key and --ca to fs, defaulting to
// HDC_ADMIN_URL, HDC_ADMIN_CERT, HDC_ADMIN_KEY and HDC_ADMIN_CA.
func (f *adminFlags) register(fs *pflag.FlagSet) {
	cli.EnvStringVar(fs, &f.URL, "admin", "HDC_ADMIN_URL", "",
		"the Admin API's `urls`, https://backend-1:9081 https://backend-2:9081 (the backends' internal listeners, separated by spaces or commas, tried in order): the command asks the API, with a person's certificate, instead of opening the database")
	cli.EnvStringVar(fs, &f.Timeout, "admin-timeout", "HDC_ADMIN_TIMEOUT", adminclient.DefaultAttempt.String(),
		"how long each backend of the Admin API is given to connect and begin its answer before the next is tried")
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
	attempt, err := time.ParseDuration(f.Timeout)
	if err != nil || attempt <= 0 {
		return nil, fmt.Errorf("--admin-timeout (HDC_ADMIN_TIMEOUT) %q is not a duration such as 2s", f.Timeout)
	}
	return adminclient.New(adminclient.SplitURLs(f.URL), cfg, attempt)
}

// withAPI runs fn with the Admin API the flags choose, which a command
// asks alike either way: the API's client (adminclient.Client) when
// --admin names it or, with no --db, --admin or --direct, when the data
// directory holds a running hdc up's AdminFile; else the API's service
// (admin.Service) over the database the store flags locate, opened here,
// in the name of the local user (audit.LocalOperator).
func (f *storeFlags) withAPI(cmd *cobra.Command, fn func(context.Context, adminapi.API) error) error {
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

// direct returns the API of direct mode, the service over st, and ctx in
// the name of the local user (audit.LocalOperator).
func direct(ctx context.Context, st *sealed.Store, opts ...admin.Option) (context.Context, *admin.Service) {
	return audit.WithPerson(ctx, audit.LocalOperator()), admin.New(st, identity.New(st, 1), keyadmin.New(st), opts...)
}
