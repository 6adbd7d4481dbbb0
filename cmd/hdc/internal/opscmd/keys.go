package opscmd

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/keyadmin/registryadmin"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// keysAuditHelp is how add, rotate and retire are audited.
const keysAuditHelp = `
In the database, the change and its record in the audit trail (the trail
of the key's client's workspace) are one transaction. With --registry,
the change is recorded in the audit trail of the backend's database
(--db, --data) before the registry file is written: when that record
cannot be written, the command fails and the registry is unchanged; when
there is no database there, the change is made and a warning says it is
not audited.`

// registryEnv names the environment variable that --registry defaults to;
// the reference Caddyfile reads the same one.
const registryEnv = "HDC_KEY_REGISTRY"

func newKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage the clients' shared encryption keys",
		Long: `Manage the clients' shared encryption keys: which key id (kid) names which
16-byte shared key, which client owns it, and its rotation status.

By default the keys are in the backend's database (--db, --data, like hdc
clients), sealed under its keeper: every edge looks them up in the backend
and a change reaches every edge within a second. With --registry (or
HDC_KEY_REGISTRY) the commands change a registry file instead, for an edge
that reads one (a standalone edge): changes are written atomically under a
lock, a running edge picks them up within its poll interval, and the file
must be mode 0600. hdc keys import moves a registry file into the
database.

add, list, rotate and retire on the database's keys work remotely too,
through the backend's Admin API (--admin, --cert, --key, --ca), with
nothing of the database or its keeper on this machine. A registry file
(--registry), hdc keys import and hdc keys wrap are direct only: they read
or write a file on this machine with the keeper.`,
	}
	var registry string
	cli.EnvStringVar(cmd.PersistentFlags(), &registry, "registry", registryEnv, "", "registry file instead of the database")
	path := func() string { return registry }
	cmd.AddCommand(newKeysAddCmd(path), newKeysRotateCmd(path), newKeysRetireCmd(path), newKeysListCmd(path),
		newKeysWrapCmd(path), newKeysImportCmd(path))
	return cmd
}

// printIssued prints k as add and rotate print it (adminapi.IssuedKey, the
// answer of the Admin API that makes it), or puts it in the credentials
// file out names and prints it there without its secret.
func printIssued(cmd *cobra.Command, k adminapi.IssuedKey, out handover) error {
	return out.handKey(cmd, k)
}

// keyKind is what add makes a key besides its secret: its content
// encryption and whether its envelopes must be fresh.
type keyKind struct {
	enc          string
	requireFresh bool
}

// kindFlags adds --enc and --require-fresh to cmd.
func kindFlags(cmd *cobra.Command, kind *keyKind) {
	cmd.Flags().StringVar(&kind.enc, "enc", jwe.EncA128CBCHS256, "the key's content encryption: A128CBC-HS256 (the specification's) or A256GCM")
	cmd.Flags().BoolVar(&kind.requireFresh, "require-fresh", false, "every envelope must name iat and jti (always so for A256GCM)")
}

// check refuses an enc that is not the transport's.
func (kind keyKind) check() error {
	if !jwe.ValidEnc(kind.enc) {
		return fmt.Errorf("--enc must be %s or %s", jwe.EncA128CBCHS256, jwe.EncA256GCM)
	}
	return nil
}

func newKeysAddCmd(path func() string) *cobra.Command {
	var client, kid, secret string
	var kind keyKind
	var sf storeFlags
	var out handover
	cmd := &cobra.Command{
		Use:   "add --client ID [--kid KID] [--secret S] [--enc A128CBC-HS256|A256GCM] [--require-fresh] [--credentials-out FILE]",
		Short: "Add an active key for a client and print it as JSON",
		Long: `Add an active key for a client and print {"kid","client_id","secret","enc","jwk"},
with "require_fresh": true for a key whose envelopes must name iat and jti.
"jwk" is the key as a JSON Web Key, {"kty":"oct","kid","enc","k"}, which
JOSE libraries import as it is: its k is the A256GCM secret, or the 16-byte
A128CBC-HS256 secret written twice, and it names no alg (the envelope's
header says dir). Without --secret a random secret is generated from
crypto/rand (16 characters for A128CBC-HS256, 32 bytes in base64url for
A256GCM); without --kid a random kid is generated. Every envelope under an
A256GCM key, or a key added with --require-fresh, must name iat and jti in
its protected header. In the database, the client must be there; with
--registry, when the backend's database (--db,
--data) is there and has no active client of that id, it warns. With
--credentials-out the key goes into the client's credentials file too
(hdc clients create --credentials-out writes the rest; docs/clients.md).
` + keysAuditHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := kind.check(); err != nil {
				return err
			}
			return sf.withKeys(cmd, path(), true, func(ctx context.Context, keys adminapi.Keys) error {
				if path() != "" {
					sf.warnUnknownClient(cmd, client)
				}
				k, err := keys.AddKey(ctx, client, adminapi.AddKeyRequest{Kid: kid, Secret: secret, Enc: kind.enc, RequireFresh: kind.requireFresh})
				if err != nil {
					return keyError(err, client)
				}
				return printIssued(cmd, k, out)
			})
		},
	}
	sf.register(cmd)
	out.register(cmd)
	cmd.Flags().StringVar(&client, "client", "", "client id that owns the key (required)")
	cmd.Flags().StringVar(&kid, "kid", "", "key id (default: generated)")
	cmd.Flags().StringVar(&secret, "secret", "", "the secret: 16 bytes for A128CBC-HS256, 32 bytes in base64url for A256GCM (default: generated)")
	kindFlags(cmd, &kind)
	_ = cmd.MarkFlagRequired("client")
	return cmd
}

func newKeysListCmd(path func() string) *cobra.Command {
	var asJSON bool
	var client string
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "list [--client ID] [--json]",
		Short: "List keys with their client, content encryption, whether they require iat and jti, status and dates (never secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys, err := listKeys(cmd, &sf, path(), client)
			if err != nil {
				return err
			}
			if asJSON {
				return cli.PrintJSON(cmd.OutOrStdout(), keys)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KID\tCLIENT\tENC\tFRESH\tSTATUS\tCREATED\tRETIRING\tRETIRED\tLAST USED")
			for _, k := range keys {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Kid, k.ClientID, k.Enc, yesNo(k.RequireFresh), k.Status,
					k.CreatedAt.Format(time.RFC3339), formatTime(k.RetiringAt), formatTime(k.RetiredAt), formatTime(k.LastUsedAt))
			}
			return tw.Flush()
		},
	}
	sf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&client, "client", "", "only this client's keys")
	return cmd
}

// yesNo is a flag as the list's table writes it.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// listedKey is a key as hdc keys list prints it: with its last use
// through any edge when it is the database's and was used (a registry
// file knows of none).
type listedKey struct {
	clientkey.Listed
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// listKeys returns the keys of client (every client's when empty) in the
// database, through the Admin API, or in the registry file p, which list
// reads without a keeper.
func listKeys(cmd *cobra.Command, sf *storeFlags, p, client string) ([]listedKey, error) {
	var keys []listedKey // none is null, as before
	err := sf.withKeys(cmd, p, false, func(ctx context.Context, api adminapi.Keys) error {
		all, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[adminapi.KeyInfo], error) {
			return api.ListKeys(ctx, adminapi.KeyQuery{Client: client, Cursor: cursor, Limit: adminapi.MaxLimit})
		})
		for _, k := range all {
			keys = append(keys, listedKey{Listed: k.Listed, LastUsedAt: k.LastUsedAt})
		}
		return err
	})
	return keys, err
}

func formatTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}

func newKeysWrapCmd(path func() string) *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "wrap",
		Short: "Seal the plain secrets of a registry an earlier version wrote",
		Long: `Seal every secret of the registry file that an earlier version wrote in the
clear, under a data key the keeper (--keeper, HDC_KEEPER) wraps; the next
change of the registry would do it too. The keys and their statuses stay.
Prints {"keys": n}. Direct only: the file and the keeper are on this
machine (no --admin).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := path()
			if p == "" {
				return errors.New("--registry is required: the database's keys are sealed as they are written")
			}
			if err := sf.directOnly("hdc keys wrap"); err != nil {
				return err
			}
			sealer, closeKeeper, err := sf.sealer(cmd.Context())
			if err != nil {
				return err
			}
			defer closeKeeper()
			n := 0
			if err := registryfile.Update(p, sealer, func(f *registryfile.File) error { n = len(f.Keys); return nil }); err != nil {
				return err
			}
			return cli.PrintJSON(cmd.OutOrStdout(), map[string]int{"keys": n})
		},
	}
	sf.register(cmd)
	return cmd
}

func newKeysImportCmd(path func() string) *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Move the keys of a registry file into the database",
		Long: `Store every key of the registry file FILE in the backend's database (--db,
--data) as it is: kid, secret, status and dates, so that no client notices
the move. The file's secrets are opened with the keeper (--keeper,
HDC_KEEPER), the registry's and the database's. All keys or none: a kid the
database has already fails the import. Each key is recorded in the audit
trail (key_add). Then point the edges at the backend (the reference
Caddyfile does when HDC_KEY_REGISTRY is unset). Prints {"keys": n}.
Direct only: it reads FILE and opens the database on this machine (no
--admin).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if path() != "" {
				return errors.New("import reads FILE into the database: drop --registry (and HDC_KEY_REGISTRY)")
			}
			if err := sf.directOnly("hdc keys import"); err != nil {
				return err
			}
			sealer, closeKeeper, err := sf.sealer(cmd.Context())
			if err != nil {
				return err
			}
			defer closeKeeper()
			st, err := sf.Open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			ctx := audit.WithPerson(cmd.Context(), audit.LocalOperator())
			n, err := registryadmin.New(args[0], sealer, nil).ImportInto(ctx, keyadmin.New(st))
			if err != nil {
				return err
			}
			return cli.PrintJSON(cmd.OutOrStdout(), map[string]int{"keys": n})
		},
	}
	sf.register(cmd)
	return cmd
}
