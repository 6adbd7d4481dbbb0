package opscmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
)

func newSharingCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "sharing",
		Short: "Manage sharing grants: keys that let a client act in another workspace",
		Long: `Manage sharing grants. A grant lets one client act in another workspace: the
client logs in with its own credentials plus the grant's sharing key, and its
tokens then act in the granted workspace. The key is shown once; the database
keeps only its SHA-256. Revoke a grant by its grant id.`,
	}
	sf.register(cmd)
	cmd.AddCommand(newSharingGrantCmd(&sf), newSharingRevokeCmd(&sf), newSharingListCmd(&sf))
	return cmd
}

func newSharingGrantCmd(sf *storeFlags) *cobra.Command {
	var workspace, client string
	cmd := &cobra.Command{
		Use:   "grant --workspace W --client C",
		Short: "Let client C act in workspace W; print the sharing key once",
		Long: `Let client C act in workspace W (both must exist, and W must not be C's own
workspace) and print {"grant_id", "sharing_key", "workspace_id", "client_id"}.
Give the sharing key to the client now: it cannot be shown again. Keep the
grant id to revoke the grant.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				g, err := p.CreateGrant(ctx, workspace, client)
				if err != nil {
					return err
				}
				return cli.PrintJSON(cmd.OutOrStdout(), g)
			})
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace the client may act in")
	cmd.Flags().StringVar(&client, "client", "", "client id")
	cmd.MarkFlagRequired("workspace")
	cmd.MarkFlagRequired("client")
	return cmd
}

func newSharingRevokeCmd(sf *storeFlags) *cobra.Command {
	var grant string
	cmd := &cobra.Command{
		Use:   "revoke --grant G",
		Short: "Revoke a sharing grant",
		Long: `Revoke grant G: its sharing key no longer logs in, and refresh tokens of
logins made with it are refused. Access tokens already issued stay valid until
they expire.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				if _, err := p.RevokeGrant(ctx, grant); err != nil {
					return notFound(err, "grant", grant)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), map[string]string{"grant_id": grant, "status": "revoked"})
			})
		},
	}
	cmd.Flags().StringVar(&grant, "grant", "", "grant id, as printed by grant or list")
	cmd.MarkFlagRequired("grant")
	return cmd
}

func newSharingListCmd(sf *storeFlags) *cobra.Command {
	var q adminapi.GrantQuery
	var status string
	cmd := &cobra.Command{
		Use:   "list [--workspace W] [--client C] [--status active|revoked]",
		Short: "List sharing grants as JSON (never their keys)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q.Status, q.Limit = status, adminapi.MaxLimit
			return printEvery(cmd, sf, func(ctx context.Context, p adminapi.API, cursor string) (adminapi.Page[adminapi.Grant], error) {
				q.Cursor = cursor
				return p.ListGrants(ctx, q)
			})
		},
	}
	cmd.Flags().StringVar(&q.Workspace, "workspace", "", "only the grants of this workspace")
	cmd.Flags().StringVar(&q.Client, "client", "", "only the grants of this client")
	cmd.Flags().StringVar(&status, "status", "", "only the grants in force (active) or the revoked")
	return cmd
}
