package opscmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/apiclient"
	"github.com/health-data-connect/hdc/internal/contract"
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
	cmd.AddCommand(newClientsCreateCmd(&sf), newClientsListCmd(&sf), newClientsUpdateCmd(&sf), newClientsDisableCmd(&sf),
		newClientsLimitsCmd(&sf))
	return cmd
}

func newClientsCreateCmd(sf *storeFlags) *cobra.Command {
	var r adminapi.CreateClientRequest
	var labels []string
	var out handover
	cmd := &cobra.Command{
		Use:   "create --workspace W [--name N] [--label K=V]... [--credentials-out FILE --base-url URL [--edge-ca FILE]]",
		Short: "Create a client (and its workspace if needed) and print its credentials once",
		Long: `Create a client in workspace W, creating the workspace when it does not exist,
and print {"client_id", "client_secret", "workspace_id"}. Store the secret now:
it cannot be shown again. With --credentials-out the same go only to a new
file (mode 0600), with the API's base URL and, for an edge whose certificate
a private authority issued, that authority's certificate: the file to hand
the client, which hdc keys add --credentials-out completes with its key and
hdc call --credentials reads (docs/clients.md). The command then prints the
client's id and the file's name, not the secret. --name gives the client a
display name and --label a label (key=value, again for more), to find it by
(hdc clients list --name-prefix, --label).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if r.Labels, err = labelMap(labels); err != nil {
				return err
			}
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				if err := out.checkNew(); err != nil {
					return err
				}
				cred, err := p.CreateClient(ctx, r)
				if err != nil {
					return err
				}
				said := handedOver{ClientID: cred.ClientID, WorkspaceID: cred.WorkspaceID}
				return out.hand(cmd, cred.ClientID, cred, said, apiclient.Handover{Secret: cred.ClientSecret, WorkspaceID: cred.WorkspaceID})
			})
		},
	}
	out.register(cmd)
	cmd.Flags().StringVar(&r.WorkspaceID, "workspace", "", "workspace id (letters, digits, '.', '_', '-'; at most 64)")
	cmd.Flags().StringVar(&r.Name, "name", "", "the client's display name (at most 200 characters)")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "a label of the client, key=value (again for more)")
	cmd.MarkFlagRequired("workspace")
	return cmd
}

func newClientsUpdateCmd(sf *storeFlags) *cobra.Command {
	var client, name string
	var labels []string
	var r adminapi.UpdateClientRequest
	cmd := &cobra.Command{
		Use:   "update --client C [--name N] [--label K=V]... [--remove-label K]...",
		Short: "Change a client's name and labels",
		Long: `Change client C's display name (--name "" removes it), add or change labels
(--label key=value, again for more) and remove labels (--remove-label key), and
print the client as it then is. The audit trail records the change with its
author and every field it moved, before and after (client_update).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("name") {
				r.Name = &name
			}
			var err error
			if r.Labels, err = labelMap(labels); err != nil {
				return err
			}
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				c, err := p.UpdateClient(ctx, client, r)
				if err != nil {
					return notFound(err, "client", client)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), c)
			})
		},
	}
	cmd.Flags().StringVar(&client, "client", "", "client id")
	cmd.Flags().StringVar(&name, "name", "", "the client's new display name; \"\" removes it")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "a label to add or change, key=value (again for more)")
	cmd.Flags().StringArrayVar(&r.RemoveLabels, "remove-label", nil, "the key of a label to remove (again for more)")
	cmd.MarkFlagRequired("client")
	return cmd
}

// labelMap reads labels written key=value into a map; a key given twice
// is refused.
func labelMap(labels []string) (map[string]string, error) {
	if len(labels) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(labels))
	for _, l := range labels {
		k, v, err := contract.ParseLabel(l)
		if err != nil {
			return nil, fmt.Errorf("--label: %w", err)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("--label: the key %s is given twice", k)
		}
		m[k] = v
	}
	return m, nil
}

func newClientsListCmd(sf *storeFlags) *cobra.Command {
	var q adminapi.ClientQuery
	var status string
	cmd := &cobra.Command{
		Use:   "list [--workspace W] [--status active|disabled] [--name-prefix P] [--label K=V]...",
		Short: "List clients as JSON (never their secrets)",
		Long: `List the clients the filters select as JSON, with their names and labels,
never their secrets: in creation order, or with --name-prefix in the order of
their names. --name-prefix finds the clients whose name starts with it, letter
case aside; --label key=value those with the label (again: with every one).`,
		Args: cobra.NoArgs,
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
	cmd.Flags().StringVar(&q.NamePrefix, "name-prefix", "", "only the clients whose name starts with this, letter case aside")
	cmd.Flags().StringArrayVar(&q.Labels, "label", nil, "only the clients with this label, key=value (again: with every one)")
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
