package opscmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// keyChange is what a key command changed in a registry file, as its audit
// record says it: the key, its client, and for a rotation the keys it
// moved to retiring and what the new key gave up.
type keyChange struct {
	Kid, Client        string
	Replaced, Weakened []string
}

// errDryRun ends an edit of a registry file that is only to say what it
// would change: nothing is written.
var errDryRun = errors.New("a dry run")

// addInRegistry adds a key to the registry at p (updateKeys) and prints it
// (printIssued).
func addInRegistry(cmd *cobra.Command, sf *storeFlags, p string, out handover, add func(*registryfile.File) (registryfile.Key, error)) error {
	var k clientkey.Key
	err := sf.updateKeys(cmd, p, audit.KeyAdd, func(f *registryfile.File) (keyChange, error) {
		e, err := add(f)
		k = e.Key
		return keyChange{Kid: k.Kid, Client: k.ClientID}, err
	})
	if err != nil {
		return err
	}
	return printIssued(cmd, adminapi.Issued(k), out)
}

// updateKeys applies change, a key command's edit of the registry at p, and
// records it in the audit trail of the backend's database that the flags
// locate, as action on the key change returns. The key's workspace is its
// client's, or the installation's trail ("") when the database has no
// such client.
//
// The order: the record is appended under the registry's lock once the
// edited registry validates, and before the file is written, so that an
// audit write that fails leaves the registry unchanged and fails the
// command. Should writing the file then fail, a record of the same action
// with outcome "failed" follows (best effort). When the database is not
// there (no SQLite file at --data, --db unset), the change is made
// unaudited and the command says so on standard error: the registry may be
// kept where the backend's database is not. A database that is configured
// but does not open fails the command, and the registry is unchanged.
func (sf *storeFlags) updateKeys(cmd *cobra.Command, p string, action audit.Action, change func(*registryfile.File) (keyChange, error)) error {
	ctx := cmd.Context()
	sealer, closeKeeper, err := sf.sealer(ctx)
	if err != nil {
		return err
	}
	defer closeKeeper()
	st, err := sf.OpenExisting(ctx)
	switch {
	case errors.Is(err, storage.ErrNoDatabase):
		st = nil
	case err != nil:
		return fmt.Errorf("the backend's database (--db, --data), where key changes are audited: %w; the registry is unchanged", err)
	default:
		defer st.Close()
	}
	var ev audit.Event
	recorded := false
	err = registryfile.Update(p, sealer, func(f *registryfile.File) error {
		c, err := change(f)
		if err == nil {
			err = f.Validate()
		}
		if err != nil || st == nil {
			return err
		}
		ws, err := clientWorkspace(ctx, st, c.Client)
		if err != nil {
			return fmt.Errorf("recording the key change in the audit trail: %w; the registry is unchanged", err)
		}
		ev = audit.Event{At: time.Now(), Action: action, Outcome: audit.Success, Workspace: ws, Entity: audit.Entity{Kind: audit.EntityKey, ID: c.Kid}, Person: audit.LocalOperator(),
			Replaced: c.Replaced, Weakened: c.Weakened}
		if _, err := st.AppendAudit(ctx, ev); err != nil {
			return fmt.Errorf("recording the key change in the audit trail: %w; the registry is unchanged", err)
		}
		recorded = true
		return nil
	})
	switch {
	case err != nil && recorded:
		ev.At, ev.Outcome = time.Now(), audit.Failed
		if _, aerr := st.AppendAudit(ctx, ev); aerr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "hdc: warning: the audit trail records %s of key %q, which failed, and recording the failure failed too: %v\n", action, ev.Entity.ID, aerr)
		}
	case err == nil && st == nil:
		fmt.Fprintf(cmd.ErrOrStderr(), "hdc: warning: no backend database (--db, --data): this %s is not in the audit trail\n", action)
	}
	return err
}

// clientWorkspace returns the workspace of the client in st, "" when
// there is no such client.
func clientWorkspace(ctx context.Context, st store.Identities, client string) (string, error) {
	c, err := st.GetClient(ctx, client)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return c.WorkspaceID, err
}
