package opscmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
	"github.com/spf13/cobra"
)

// KeyPlane changes the keys in the backend's database, which the edges
// read from the backend: each change is one transaction with its audit
// record, and reaches every edge through the backend's change feed.
type KeyPlane struct {
	st *sealed.Store
}

// NewKeyPlane returns the key plane of st.
func NewKeyPlane(st *sealed.Store) *KeyPlane { return &KeyPlane{st: st} }

// keyPlane opens the database the flags locate, with its keeper.
func (f *storeFlags) keyPlane(ctx context.Context) (*KeyPlane, error) {
	st, err := f.Open(ctx)
	if err != nil {
		return nil, err
	}
	return NewKeyPlane(st), nil
}

func (p *KeyPlane) close() { p.st.Close() }

// Ensure adds the key k of client unless its kid is there, whatever its
// status: hdc up's demo key, added on the first run.
func (p *KeyPlane) Ensure(ctx context.Context, client, kid, secret string) error {
	_, err := p.st.ClientKey(ctx, kid)
	if errors.Is(err, store.ErrNotFound) {
		_, err = p.issue(ctx, client, kid, secret, false, keyKind{})
	}
	return err
}

// keyKind is what a new key is besides its secret: its content encryption
// (A128CBC-HS256 when empty) and whether its envelopes must be fresh.
type keyKind struct {
	enc          string
	requireFresh bool
}

// issue adds an active key of kind for client (rotating: its active keys
// become retiring), with kid and secret, or generated ones when empty.
func (p *KeyPlane) issue(ctx context.Context, client, kid, secret string, rotate bool, kind keyKind) (clientkey.Key, error) {
	c, err := p.st.GetClient(ctx, client)
	if err != nil {
		return clientkey.Key{}, notFound(err, "client", client)
	}
	k := clientkey.New(client, kid, secret, kind.enc, kind.requireFresh, time.Now())
	if err := k.Validate(); err != nil {
		return k, err
	}
	action, change := audit.KeyAdd, p.st.AddClientKey
	if rotate {
		action, change = audit.KeyRotate, p.st.RotateClientKey
	}
	_, err = change(ctx, store.ClientKey{Key: k, WorkspaceID: c.WorkspaceID}, keyEvent(action, c.WorkspaceID, k.Kid, k.CreatedAt))
	switch {
	case errors.Is(err, store.ErrConflict):
		return k, fmt.Errorf("kid %q already exists", k.Kid)
	case rotate && errors.Is(err, store.ErrNotFound):
		return k, fmt.Errorf("client %q has no keys: add one with hdc keys add", client)
	}
	return k, err
}

// retire retires the key kid.
func (p *KeyPlane) retire(ctx context.Context, kid string) error {
	k, err := p.st.Store.ClientKey(ctx, kid) // its workspace, for the record; the secret stays sealed
	if err != nil {
		return notFound(err, "key with kid", kid)
	}
	now := time.Now()
	_, err = p.st.RetireClientKey(ctx, kid, now, keyEvent(audit.KeyRetire, k.WorkspaceID, kid, now))
	return notFound(err, "key with kid", kid)
}

// listPage is how many keys list reads at a time.
const listPage = 1000

// list returns the keys, of client or of every client, without secrets.
func (p *KeyPlane) list(ctx context.Context, client string) ([]clientkey.Listed, error) {
	var out []clientkey.Listed
	for after := ""; ; {
		page, err := p.st.ListClientKeys(ctx, store.ClientKeyFilter{ClientID: client, After: after, Limit: listPage})
		if err != nil {
			return nil, err
		}
		for _, k := range page {
			out = append(out, k.Listed())
		}
		if len(page) < listPage {
			return out, nil
		}
		after = page[len(page)-1].Kid
	}
}

// ImportFile stores every key of the registry file at path, opened with
// sealer, as it is (kid, secret, status and dates), in one transaction:
// a kid the database has fails the import, and nothing is stored. Each
// key's record is in its client's workspace's trail, the installation's
// when the database has no such client.
func (p *KeyPlane) ImportFile(ctx context.Context, path string, sealer *registryfile.Sealer) (int, error) {
	r, err := registryfile.Load(path, sealer)
	if err != nil {
		return 0, err
	}
	if bad := r.Unavailable(); len(bad) > 0 {
		return 0, fmt.Errorf("the secrets of %d keys do not open (%q…): nothing was imported", len(bad), bad[0])
	}
	now := time.Now()
	workspaces := map[string]string{}
	keys, events := make([]store.ClientKey, 0, r.Len()), make([]audit.Event, 0, r.Len())
	for _, k := range r.Keys() {
		ws, ok := workspaces[k.ClientID]
		if !ok {
			if ws, err = clientWorkspace(ctx, p.st, k.ClientID); err != nil {
				return 0, err
			}
			workspaces[k.ClientID] = ws
		}
		keys = append(keys, storedKey(k.Key, ws))
		events = append(events, keyEvent(audit.KeyAdd, ws, k.Kid, now))
	}
	if err := p.st.ImportClientKeys(ctx, keys, events); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return 0, errors.New("a kid of the file is in the database already: nothing was imported")
		}
		return 0, err
	}
	return len(keys), nil
}

// storedKey is k, a registry file's key, of workspace ws as the store
// keeps it: its enc and freshness as the file has them, the enc spelt
// out, since an entry of an earlier version's file names none (and is
// A128CBC-HS256).
func storedKey(k clientkey.Key, ws string) store.ClientKey {
	k.Enc = k.ContentEncryption()
	return store.ClientKey{Key: k, WorkspaceID: ws}
}

// keyEvent is the audit record of a key command.
func keyEvent(action audit.Action, workspace, kid string, at time.Time) audit.Event {
	return audit.Event{At: at, Action: action, Outcome: audit.Success, Workspace: workspace, Entity: audit.Entity{Kind: audit.EntityKey, ID: kid}}
}

// issueInDatabase adds (or, rotating, rotates to) a key of client in the
// database and prints it.
func issueInDatabase(cmd *cobra.Command, sf *storeFlags, client, kid, secret string, rotate bool, kind keyKind) (clientkey.Key, error) {
	kp, err := sf.keyPlane(cmd.Context())
	if err != nil {
		return clientkey.Key{}, err
	}
	defer kp.close()
	k, err := kp.issue(cmd.Context(), client, kid, secret, rotate, kind)
	if err != nil {
		return k, err
	}
	return k, cli.PrintJSON(cmd.OutOrStdout(), issued(k))
}
