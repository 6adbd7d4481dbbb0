package upcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/keyadmin/registryadmin"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/opscmd"
	"github.com/health-data-connect/hdc/internal/apiclient"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// legacyRegistryFile is the registry file earlier versions of hdc up kept
// in the data directory, before the keys moved into the database.
const legacyRegistryFile = "keys.json"

// ensureDemo returns the demo credentials, creating the client and its
// encryption key on the first run.
func ensureDemo(ctx context.Context, srv *backend.Server, data, baseURL, workspace string) (apiclient.Credentials, error) {
	path := filepath.Join(data, opscmd.DemoCredentialsFile)
	var creds apiclient.Credentials
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &creds); err != nil {
			return creds, fmt.Errorf("%s: %w (delete it to start afresh)", path, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		c, err := srv.Identity().CreateClient(ctx, audit.LocalOperator(), workspace, identity.Meta{})
		if err != nil {
			return creds, fmt.Errorf("creating the demo client: %w", err)
		}
		creds = apiclient.Credentials{ClientID: c.ClientID, ClientSecret: c.ClientSecret, WorkspaceID: c.WorkspaceID,
			Kid: clientkey.NewKid(), EncryptionKey: clientkey.NewSecret()}
	default:
		return creds, err
	}
	creds.BaseURL = baseURL
	// The database may be new: make sure the demo key is there.
	if err := keyadmin.New(srv.Store()).Ensure(ctx, audit.LocalOperator(), creds.ClientID, creds.Kid, creds.EncryptionKey); err != nil {
		return creds, fmt.Errorf("the demo key: %w", err)
	}
	return creds, creds.Save(path)
}

// importRegistry moves the registry file an earlier version of hdc up kept
// in data into the database, once: its keys, as they are, then the file
// renamed keys.json.imported. It returns how many keys it moved.
func importRegistry(ctx context.Context, srv *backend.Server, data, keeperURL string) (int, error) {
	path := filepath.Join(data, legacyRegistryFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	k, err := keeper.Open(ctx, keeperURL)
	if err != nil {
		return 0, fmt.Errorf("--keeper (%s): %w", opscmd.KeeperEnv, err)
	}
	defer k.Close()
	ctx = audit.WithPerson(ctx, audit.LocalOperator())
	n, err := registryadmin.New(path, registryfile.NewSealer(k), nil).ImportInto(ctx, keyadmin.New(srv.Store()))
	if err != nil {
		return 0, fmt.Errorf("moving %s into the database: %w", path, err)
	}
	return n, os.Rename(path, path+".imported")
}
