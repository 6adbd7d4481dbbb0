package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/privatefile"
	kidregistry "github.com/health-data-connect/hdc/kid-registry"
)

// demoCredentialsFile is the name of the demo credentials hdc up writes in
// its data directory, next to the key registry.
const demoCredentialsFile = "demo-credentials.json"

// demoCredentials is what the first run writes for hdc call.
type demoCredentials struct {
	BaseURL       string `json:"base_url"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	Kid           string `json:"kid"`
	EncryptionKey string `json:"encryption_key"`
	WorkspaceID   string `json:"workspace_id"`
}

// ensureDemo returns the demo credentials, creating the client and its
// encryption key on the first run.
func ensureDemo(ctx context.Context, srv *backend.Server, sealer *kidregistry.Sealer, data, registry, baseURL, workspace string) (demoCredentials, error) {
	path := filepath.Join(data, demoCredentialsFile)
	var creds demoCredentials
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &creds); err != nil {
			return creds, fmt.Errorf("%s: %w (delete it to start afresh)", path, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		c, err := srv.Identity().CreateClient(ctx, workspace)
		if err != nil {
			return creds, fmt.Errorf("creating the demo client: %w", err)
		}
		creds = demoCredentials{ClientID: c.ClientID, ClientSecret: c.ClientSecret, WorkspaceID: c.WorkspaceID,
			Kid: kidregistry.NewKid(), EncryptionKey: kidregistry.NewSecret()}
	default:
		return creds, err
	}
	creds.BaseURL = baseURL
	// The registry may be new, or the key may have been retired or removed
	// by hand: make sure the demo key is there and active.
	err = kidregistry.Update(registry, sealer, func(f *kidregistry.File) error {
		for i := range f.Keys {
			if f.Keys[i].Kid == creds.Kid {
				return nil
			}
		}
		k, err := f.Add(creds.ClientID, creds.Kid, creds.EncryptionKey, time.Now())
		if err != nil {
			return err
		}
		// Recorded before the registry is written, as hdc keys add does.
		_, err = srv.Audit().AppendAudit(ctx, audit.Event{At: k.CreatedAt, Action: audit.KeyAdd, Outcome: audit.Success,
			Workspace: creds.WorkspaceID, Entity: audit.Entity{Kind: audit.EntityKey, ID: k.Kid}})
		return err
	})
	if err != nil {
		return creds, err
	}
	out, _ := json.MarshalIndent(creds, "", "  ")
	return creds, privatefile.Write(path, append(out, '\n'))
}

// syncDemoCredentials keeps the demo credentials beside registry in step
// with k, a new active key: when they belong to k's client, they take its
// kid and secret, so that hdc call goes on encrypting with the active key.
// It returns the file it rewrote, or "" when there was none to rewrite.
func syncDemoCredentials(registry string, k kidregistry.Key) (string, error) {
	path := filepath.Join(filepath.Dir(registry), demoCredentialsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	var creds demoCredentials
	if err := json.Unmarshal(b, &creds); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if creds.ClientID != k.ClientID {
		return "", nil
	}
	creds.Kid, creds.EncryptionKey = k.Kid, k.Secret
	out, _ := json.MarshalIndent(creds, "", "  ")
	return path, privatefile.Write(path, append(out, '\n'))
}
