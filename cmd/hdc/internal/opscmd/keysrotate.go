package opscmd

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
)

func newKeysRotateCmd(path func() string) *cobra.Command {
	var r keyadmin.RotateRequest
	var sf storeFlags
	var out handover
	cmd := &cobra.Command{
		Use:   "rotate --client ID [--enc A128CBC-HS256|A256GCM] [--require-fresh[=false]] [--allow-weaker] [--dry-run] [--credentials-out FILE]",
		Short: "Give a client a new active key; its previous active keys become retiring",
		Long: `Add a new active key for the client and move its previous active keys to
retiring: they are still accepted, so clients can switch at their pace. Once
no edge has used a retiring key for a while (the edges' metrics), retire it.
When the client is hdc up's demo client, the demo credentials in the data
directory (beside the registry, with --registry) take the new key.

The new key is of the kind of the key it replaces (the client's newest
active key): its --enc, and whether its envelopes must name iat and jti
(--require-fresh), unless the flags name another. A client moves to A256GCM
keys by a rotation with --enc A256GCM. A kind weaker than the replaced
key's (A128CBC-HS256 for A256GCM, or --require-fresh=false for a fresh key)
is refused, saying what the client would lose, unless --allow-weaker: the
rotation's audit record then names what the key gave up. The record names
the new key and the keys it moved to retiring; hdc audit list --entity
finds it by either. --dry-run prints what the rotation would do and
changes nothing. With --credentials-out the new key goes into the client's
credentials file too (docs/clients.md).
` + keysAuditHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if r.Enc != "" && !jwe.ValidEnc(r.Enc) {
				return fmt.Errorf("--enc must be %s or %s", jwe.EncA128CBCHS256, jwe.EncA256GCM)
			}
			if !cmd.Flags().Changed("require-fresh") {
				r.RequireFresh = nil
			}
			dir := sf.DataDir
			if p := path(); p != "" {
				dir = filepath.Dir(p) // hdc up's demo credentials are beside its registry
			}
			return sf.withKeys(cmd, path(), true, func(ctx context.Context, keys adminapi.Keys) error {
				rot, err := keys.RotateKey(ctx, r.Client, adminapi.RotateKeyRequest{Enc: r.Enc, RequireFresh: r.RequireFresh,
					AllowWeaker: r.AllowWeaker, DryRun: r.DryRun})
				if err != nil {
					return keyError(err, r.Client)
				}
				return printRotation(cmd, dir, rot, out)
			})
		},
	}
	sf.register(cmd)
	out.register(cmd)
	f := cmd.Flags()
	f.StringVar(&r.Client, "client", "", "client id (required)")
	f.StringVar(&r.Enc, "enc", "", "the new key's content encryption, A128CBC-HS256 or A256GCM (default: the replaced key's)")
	r.RequireFresh = new(bool)
	f.BoolVar(r.RequireFresh, "require-fresh", false, "every envelope must name iat and jti (default: as the replaced key; always so for A256GCM)")
	f.BoolVar(&r.AllowWeaker, "allow-weaker", false, "allow a new key weaker than the one it replaces (A128CBC-HS256 for A256GCM, not fresh for fresh)")
	f.BoolVar(&r.DryRun, "dry-run", false, "print what the rotation would do, and change nothing")
	_ = cmd.MarkFlagRequired("client")
	return cmd
}

// printRotation prints what a rotation did (the new key, once, into the
// credentials file out names too) and, on standard error, what it means;
// or, for a dry run, what it would do. dir is the data directory whose
// demo credentials take the new key.
func printRotation(cmd *cobra.Command, dir string, rot adminapi.Rotation, out handover) error {
	if rot.DryRun || rot.Key == nil {
		return cli.PrintJSON(cmd.OutOrStdout(), rot)
	}
	if err := printIssued(cmd, *rot.Key, out); err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	if len(rot.Weakened) > 0 {
		fmt.Fprintf(stderr, "hdc: warning: the new key is weaker than the one it replaces: %s\n", clientkey.LossText(rot.Weakened))
	}
	for _, kid := range rot.Retiring {
		fmt.Fprintf(stderr, "hdc: %s is retiring: retire it (hdc keys retire --kid %s) once no edge uses it\n", kid, kid)
	}
	synced, err := syncDemoCredentials(dir, rot.Key.Key())
	if synced != "" {
		fmt.Fprintf(stderr, "hdc: %s now holds the new key\n", synced)
	}
	return err
}

func newKeysRetireCmd(path func() string) *cobra.Command {
	var r keyadmin.RetireRequest
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "retire --kid KID [--force] [--dry-run]",
		Short: "Retire a key: requests encrypted with it are refused from then on",
		Long: `Retire a key: requests encrypted with it are refused from then on. The
retirement of a client's last active key, which would leave the client
nothing to encrypt with, is refused, saying what the client would lose:
rotate first, or pass --force. --dry-run prints what the retirement would
do and when an edge last used the key (last_used_at, absent for never),
and changes nothing.
` + keysAuditHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ret, lastUse, err := retireKey(cmd, &sf, path(), r)
			if err != nil {
				return err
			}
			if r.DryRun {
				return cli.PrintJSON(cmd.OutOrStdout(), map[string]any{"dry_run": true, "kid": r.Kid,
					"client_id": ret.Key.ClientID, "status": string(clientkey.Retired), "changed": ret.Changed,
					"last_used_at": lastUse})
			}
			return cli.PrintJSON(cmd.OutOrStdout(), map[string]string{"kid": r.Kid, "status": string(clientkey.Retired)})
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&r.Kid, "kid", "", "key id (required)")
	cmd.Flags().BoolVar(&r.Force, "force", false, "retire a client's last active key, or its last key")
	cmd.Flags().BoolVar(&r.DryRun, "dry-run", false, "print what the retirement would do, and change nothing")
	_ = cmd.MarkFlagRequired("kid")
	return cmd
}

// retireKey retires r.Kid in the database, through the Admin API, or in the
// registry file p, or says what its retirement would do and when an edge
// last used the key (nil for never, or a registry file, which keeps no
// use), as the runbook asks before a retirement; a refusal is worded for
// the command line (keyError).
func retireKey(cmd *cobra.Command, sf *storeFlags, p string, r keyadmin.RetireRequest) (adminapi.Retirement, *time.Time, error) {
	var ret adminapi.Retirement
	var lastUse *time.Time
	err := sf.withKeys(cmd, p, true, func(ctx context.Context, keys adminapi.Keys) error {
		var err error
		if ret, err = keys.RetireKey(ctx, r.Kid, adminapi.RetireKeyRequest{Force: r.Force, DryRun: r.DryRun}); err != nil {
			k, _ := keys.GetKey(ctx, r.Kid) // whose key it is, for the advice
			return keyError(err, k.ClientID)
		}
		if r.DryRun {
			k, err := keys.GetKey(ctx, r.Kid)
			lastUse = k.LastUsedAt
			return err
		}
		return nil
	})
	return ret, lastUse, err
}
