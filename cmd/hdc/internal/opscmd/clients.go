package opscmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/apiclient"
)

func newClientsCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "clients",
		Short: "Manage API clients in the backend's database",
		Long: `Manage API clients in the backend's database.

A client belongs to one workspace and logs in with its client id and secret.
The secret is shown once, when the client is created; the database keeps
only an HMAC-SHA-256 of it under a key of the installation.`,
	}
	sf.register(cmd)
	cmd.AddCommand(newClientsCreateCmd(&sf), newClientsListCmd(&sf), newClientsDisableCmd(&sf), newClientsLimitsCmd(&sf))
	return cmd
}

func newClientsCreateCmd(sf *storeFlags) *cobra.Command {
	var workspace string
	var out handover
	cmd := &cobra.Command{
		Use:   "create --workspace W [--credentials-out FILE --base-url URL [--edge-ca FILE]]",
		Short: "Create a client (and its workspace if needed) and print its credentials once",
		Long: `Create a client in workspace W, creating the workspace when it does not exist,
and print {"client_id", "client_secret", "workspace_id"}. Store the secret now:
it cannot be shown again. With --credentials-out the same go to a file (mode
0600), with the API's base URL and, for an edge whose certificate a private
authority issued, that authority's certificate: the file to hand the client,
which hdc keys add --credentials-out completes with its key and hdc call
--credentials reads (docs/clients.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				cred, err := p.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: workspace})
				if err != nil {
					return err
				}
				if err := cli.PrintJSON(cmd.OutOrStdout(), cred); err != nil {
					return err
				}
				return out.write(cmd, cred.ClientID, func(c *apiclient.Credentials) {
					c.ClientSecret, c.WorkspaceID = cred.ClientSecret, cred.WorkspaceID
				})
			})
		},
	}
	out.register(cmd)
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace id (letters, digits, '.', '_', '-'; at most 64)")
	cmd.MarkFlagRequired("workspace")
	return cmd
}

func newClientsListCmd(sf *storeFlags) *cobra.Command {
	var q adminapi.ClientQuery
	var status string
	cmd := &cobra.Command{
		Use:   "list [--workspace W] [--status active|disabled]",
		Short: "List clients as JSON (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q.Status = status
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				clients, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[adminapi.Client], error) {
					q.Cursor, q.Limit = cursor, adminapi.MaxLimit
					return p.ListClients(ctx, q)
				})
				if err != nil {
					return err
				}
				return cli.PrintJSON(cmd.OutOrStdout(), clients)
			})
		},
	}
	cmd.Flags().StringVar(&q.Workspace, "workspace", "", "only the clients of this workspace")
	cmd.Flags().StringVar(&status, "status", "", "only the clients of this status: active or disabled")
	return cmd
}

func newClientsDisableCmd(sf *storeFlags) *cobra.Command {
	var client string
	cmd := &cobra.Command{
		Use:   "disable --client C",
		Short: "Disable a client: it can no longer log in or refresh",
		Long: `Disable client C: its logins and refreshes are refused from now on. Access
tokens it already holds stay valid until they expire (at most the access token
lifetime).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				c, err := p.DisableClient(ctx, client)
				if err != nil {
					return notFound(err, "client", client)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), map[string]string{"client_id": c.ClientID, "status": string(c.Status)})
			})
		},
	}
	cmd.Flags().StringVar(&client, "client", "", "client id")
	cmd.MarkFlagRequired("client")
	return cmd
}
