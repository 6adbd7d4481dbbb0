package opscmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

func newKeeperCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keeper",
		Short: "Manage the keeper that wraps the data keys every stored secret is sealed under",
	}
	cmd.AddCommand(newKeeperInitCmd(), newKeeperRewrapCmd())
	return cmd
}

func newKeeperInitCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "init --file PATH",
		Short: "Make a local keeper's key file and print its URL",
		Long: `Make a key file for a local keeper at PATH (32 random bytes in base64, mode
0600), unless one is there, and print its keyfile:// URL, for HDC_KEEPER. A
file that is there is never replaced: what its key wraps would be lost.
Keep the file with the gateway's users only, and back it up apart from the
database: either without the other opens nothing. A KMS key (awskms://,
gcpkms://, azurekeyvault://, hashivault://) needs no init.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := filepath.Abs(file)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return err
			}
			url, err := keeper.CreateKeyFile(path)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), url)
			return err
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "`path` of the key file (required)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// rewrapped is what rewrap prints.
type rewrapped struct {
	DataKey  string `json:"data_key"`
	Store    string `json:"store"`              // "rewrapped" or "already"
	Registry string `json:"registry,omitempty"` // likewise, when a registry was given
}

func newKeeperRewrapCmd() *cobra.Command {
	var sf storeFlags
	var to, registry string
	cmd := &cobra.Command{
		Use:   "rewrap --to URL [--registry FILE]",
		Short: "Wrap the store's data key, and the registry's, under another keeper",
		Long: `Wrap the data key of the backend's database (--db, --data), and that of the
key registry file (--registry), under the keeper --to names instead of the
current one (--keeper, HDC_KEEPER). The data keys themselves stay, so every
sealed secret and the audit chain's key stay, and the backends and edges
serving go on with the data keys they hold: restart them with the new
keeper's URL afterwards, at your pace. The current keeper is needed only
until this returns. Interrupted, run it again: what the new keeper already
wraps is left as it is. The installation's audit trail records the rewrap.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := rewrap(cmd.Context(), &sf, to, registry)
			if err != nil {
				return err
			}
			return cli.PrintJSON(cmd.OutOrStdout(), out)
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&to, "to", "", "`url` of the new keeper (required)")
	cli.EnvStringVar(cmd.Flags(), &registry, "registry", registryEnv, "", "key registry `file` to rewrap too")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// rewrap rewraps the store's data key and the registry's under to, each
// recorded in the installation's audit trail as soon as it is rewrapped
// (sealed.RewrapStore, sealed.Store.RecordRewrap), so that a rewrap
// interrupted between the two is recorded as far as it went.
func rewrap(ctx context.Context, sf *storeFlags, toURL, registry string) (rewrapped, error) {
	var out rewrapped
	from, err := sf.openKeeper(ctx)
	if err != nil {
		return out, err
	}
	defer from.Close()
	to, err := keeper.Open(ctx, toURL)
	if err != nil {
		return out, fmt.Errorf("--to: %w", err)
	}
	defer to.Close()
	st, err := sf.Peek(ctx)
	if err != nil {
		return out, fmt.Errorf("the backend's database (--db, --data): %w", err)
	}
	defer st.Close()
	by := audit.LocalOperator()
	trail, id, changed, err := sealed.RewrapStore(ctx, st, from, to, by)
	out.DataKey, out.Store = id, outcome(changed)
	if err != nil || registry == "" {
		return out, err
	}
	id, changed, err = registryfile.Rewrap(registry, from, to)
	if err != nil {
		return out, fmt.Errorf("the registry %s: %w", registry, err)
	}
	out.Registry = outcome(changed)
	if changed {
		err = trail.RecordRewrap(ctx, by, id)
	}
	return out, err
}

func outcome(changed bool) string {
	if changed {
		return "rewrapped"
	}
	return "already"
}
