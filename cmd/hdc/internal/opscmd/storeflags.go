package opscmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// KeeperEnv names the variable --keeper defaults to; the backend and the
// reference Caddyfile read the same one.
const KeeperEnv = "HDC_KEEPER"

// storeFlags are the flags that locate the backend's database and the
// keeper its secrets are sealed under, shared by the command groups that
// manage identities, keys and the audit trail: they open it through the
// backend's operator surface.
type storeFlags struct {
	storage.Database
	// Admin, when its URL is set, sends the commands that have a remote
	// mode to the Admin API instead (withAPI).
	Admin adminFlags
}

// register adds --db, --data and --keeper to cmd's persistent flags,
// defaulting to HDC_DATABASE_URL, HDC_DATA and HDC_KEEPER like the server.
func (f *storeFlags) register(cmd *cobra.Command) {
	fs := cmd.PersistentFlags()
	cli.EnvStringVar(fs, &f.URL, "db", "HDC_DATABASE_URL", "", "database URL; default SQLite <data>/hdc.db")
	cli.EnvStringVar(fs, &f.DataDir, "data", "HDC_DATA", storage.DefaultDataDir, "backend data directory")
	cli.EnvStringVar(fs, &f.Keeper, "keeper", KeeperEnv, "",
		"`url` of the keeper the secrets are sealed under, the backend's; default the local key hdc up made, <data>/"+storage.LocalKeyFile+"; prefer the variable to the flag: a key in the URL shows in the process list")
	f.Admin.register(fs)
}

// openKeeper opens the keeper, for the registry's sealer.
func (f *storeFlags) openKeeper(ctx context.Context) (*keeper.Keeper, error) {
	url := f.KeeperURL()
	if url == "" {
		return nil, fmt.Errorf("--keeper (%s) is required: the registry's secrets are sealed under a data key it wraps", KeeperEnv)
	}
	k, err := keeper.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("--keeper (%s): %w", KeeperEnv, err)
	}
	return k, nil
}

// sealer returns the registry's sealer over the keeper; close releases
// the keeper.
func (f *storeFlags) sealer(ctx context.Context) (s *registryfile.Sealer, close func(), err error) {
	k, err := f.openKeeper(ctx)
	if err != nil {
		return nil, nil, err
	}
	return registryfile.NewSealer(k), func() { k.Close() }, nil
}

// warnUnknownClient warns on standard error when the backend's database
// these flags locate is there and has no active client of that id. A
// database that is not there (the registry may be kept where the backend's
// database is not) or does not answer in a few seconds is no warning, and
// none is created. The warning names the flags, never a database URL,
// which may hold a password. It reads no secret: the store is opened as
// it is.
func (f *storeFlags) warnUnknownClient(cmd *cobra.Command, client string) {
	ctx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
	defer cancel()
	st, err := f.Peek(ctx)
	if err != nil {
		return
	}
	defer st.Close()
	err = identity.New(st, 1).CheckClient(ctx, client)
	if errors.Is(err, identity.ErrInvalidClient) {
		fmt.Fprintf(cmd.ErrOrStderr(), "hdc: warning: the backend's database (--db, --data) has no active client %q: "+
			"the edge will accept the key, the backend will refuse the client (create it with hdc clients create)\n", client)
	}
}

// notFound words a store miss for an operator.
func notFound(err error, kind, id string) error {
	if isNotFound(err) {
		return fmt.Errorf("no %s %q", kind, id)
	}
	return err
}

// isNotFound reports whether err says there is no such resource, as the
// service (direct mode) or the API says it.
func isNotFound(err error) bool {
	var p *problem.Problem
	return errors.Is(err, store.ErrNotFound) || errors.As(err, &p) && p.Code == problem.CodeNotFound
}
