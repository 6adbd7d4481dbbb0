package main

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	kidregistry "github.com/health-data-connect/hdc/kid-registry"
)

// registryEnv names the environment variable that --registry defaults to;
// the reference Caddyfile reads the same one.
const registryEnv = "HDC_KEY_REGISTRY"

func newKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage the edge's shared encryption keys (the kid registry)",
		Long: `Manage the key registry file that hdc-edge reads: which key id (kid) names
which 16-byte shared key, which client owns it, and its rotation status.
Changes are written atomically under a lock; a running edge picks them up
within its poll interval. The file must be mode 0600.`,
	}
	var registry string
	cmd.PersistentFlags().StringVar(&registry, "registry", envOr(registryEnv, ""), "registry file (env "+registryEnv+")")
	path := func() (string, error) {
		if registry == "" {
			return "", errors.New("--registry is required")
		}
		return registry, nil
	}
	cmd.AddCommand(newKeysAddCmd(path), newKeysRotateCmd(path), newKeysRetireCmd(path), newKeysListCmd(path))
	return cmd
}

// issuedKey is what add and rotate print: the only time a secret is shown.
type issuedKey struct {
	Kid      string `json:"kid"`
	ClientID string `json:"client_id"`
	Secret   string `json:"secret"`
}

// issueKey applies issue to the registry at p and prints the key it made.
func issueKey(cmd *cobra.Command, p string, issue func(*kidregistry.File) (kidregistry.Key, error)) (kidregistry.Key, error) {
	var k kidregistry.Key
	err := kidregistry.Update(p, func(f *kidregistry.File) (err error) {
		k, err = issue(f)
		return err
	})
	if err != nil {
		return k, err
	}
	return k, printJSON(cmd.OutOrStdout(), issuedKey{k.Kid, k.ClientID, k.Secret})
}

func newKeysAddCmd(path func() (string, error)) *cobra.Command {
	var client, kid, secret string
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "add --client ID [--kid KID] [--secret S]",
		Short: "Add an active key for a client and print it as JSON",
		Long: `Add an active key for a client and print {"kid","client_id","secret"}.
Without --secret a random 16-character secret is generated from crypto/rand;
without --kid a random kid is generated. When the backend's database
(--db, --data) is there and has no active client of that id, it warns.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := path()
			if err != nil {
				return err
			}
			sf.warnUnknownClient(cmd, client)
			_, err = issueKey(cmd, p, func(f *kidregistry.File) (kidregistry.Key, error) {
				return f.Add(client, kid, secret, time.Now())
			})
			return err
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&client, "client", "", "client id that owns the key (required)")
	cmd.Flags().StringVar(&kid, "kid", "", "key id (default: generated)")
	cmd.Flags().StringVar(&secret, "secret", "", "shared key, exactly 16 bytes (default: generated)")
	_ = cmd.MarkFlagRequired("client")
	return cmd
}

func newKeysRotateCmd(path func() (string, error)) *cobra.Command {
	var client string
	cmd := &cobra.Command{
		Use:   "rotate --client ID",
		Short: "Give a client a new active key; its previous active keys become retiring",
		Long: `Add a new active key for the client and move its previous active keys to
retiring: they are still accepted, so clients can switch at their pace. Once
the edge's metrics show a retiring key is no longer used, retire it. When the
client is hdc up's demo client, the demo credentials beside the registry take
the new key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := path()
			if err != nil {
				return err
			}
			k, err := issueKey(cmd, p, func(f *kidregistry.File) (kidregistry.Key, error) {
				return f.Rotate(client, time.Now())
			})
			if err != nil {
				return err
			}
			synced, err := syncDemoCredentials(p, k)
			if synced != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "hdc: %s now holds the new key\n", synced)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&client, "client", "", "client id (required)")
	_ = cmd.MarkFlagRequired("client")
	return cmd
}

func newKeysRetireCmd(path func() (string, error)) *cobra.Command {
	var kid string
	cmd := &cobra.Command{
		Use:   "retire --kid KID",
		Short: "Retire a key: requests encrypted with it are refused from then on",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := path()
			if err != nil {
				return err
			}
			err = kidregistry.Update(p, func(f *kidregistry.File) error {
				return f.Retire(kid, time.Now())
			})
			if err != nil {
				return err
			}
			return printJSON(cmd.OutOrStdout(), map[string]string{"kid": kid, "status": string(kidregistry.Retired)})
		},
	}
	cmd.Flags().StringVar(&kid, "kid", "", "key id (required)")
	_ = cmd.MarkFlagRequired("kid")
	return cmd
}

// listedKey is a key as list shows it: everything but the secret.
type listedKey struct {
	Kid        string             `json:"kid"`
	ClientID   string             `json:"client_id"`
	Status     kidregistry.Status `json:"status"`
	CreatedAt  time.Time          `json:"created_at"`
	RetiringAt *time.Time         `json:"retiring_at,omitempty"`
	RetiredAt  *time.Time         `json:"retired_at,omitempty"`
}

func newKeysListCmd(path func() (string, error)) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List keys with their client, status and dates (never secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := path()
			if err != nil {
				return err
			}
			r, err := kidregistry.Load(p)
			if err != nil {
				return err
			}
			keys := make([]listedKey, 0, r.Len())
			for _, k := range r.Keys() {
				keys = append(keys, listedKey{k.Kid, k.ClientID, k.Status, k.CreatedAt, k.RetiringAt, k.RetiredAt})
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), keys)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KID\tCLIENT\tSTATUS\tCREATED\tRETIRING\tRETIRED")
			for _, k := range keys {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.Kid, k.ClientID, k.Status,
					k.CreatedAt.Format(time.RFC3339), formatTime(k.RetiringAt), formatTime(k.RetiredAt))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func formatTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
