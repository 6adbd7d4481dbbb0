package opscmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/keyadmin/registryadmin"
	"github.com/health-data-connect/hdc/backend/storage"
)

// withKeys runs fn with the keys the flags choose, which a key command
// asks alike either way (adminapi.Keys): with p, the registry file at p,
// directly (registryadmin, acting for the local user); else the Admin API
// (withAPI). changes says whether fn changes the keys: a change of the
// file needs the keeper, and is recorded in the audit trail of the
// backend's database the flags locate; when that database is not there
// (the registry may be kept where the backend's database is not), the
// change is made unaudited and standard error says so. A database that is
// configured but does not open fails the command, and the file is
// unchanged.
func (f *storeFlags) withKeys(cmd *cobra.Command, p string, changes bool, fn func(context.Context, adminapi.Keys) error) error {
	if p == "" {
		return f.withAPI(cmd, func(ctx context.Context, api adminapi.API) error { return fn(ctx, api) })
	}
	if err := f.directOnly("--registry"); err != nil {
		return err
	}
	ctx := audit.WithPerson(cmd.Context(), audit.LocalOperator())
	if !changes {
		return fn(ctx, registryadmin.New(p, nil, nil))
	}
	sealer, closeKeeper, err := f.sealer(ctx)
	if err != nil {
		return err
	}
	defer closeKeeper()
	var trail registryadmin.Trail
	switch st, err := f.OpenExisting(ctx); {
	case errors.Is(err, storage.ErrNoDatabase):
	case err != nil:
		return fmt.Errorf("the backend's database (--db, --data), where key changes are audited: %w; the registry is unchanged", err)
	default:
		defer st.Close()
		trail = st
	}
	keys := registryadmin.New(p, sealer, trail)
	keys.Unaudited = func(action audit.Action) {
		fmt.Fprintf(cmd.ErrOrStderr(), "hdc: warning: no backend database (--db, --data): this %s is not in the audit trail\n", action)
	}
	return fn(ctx, keys)
}
