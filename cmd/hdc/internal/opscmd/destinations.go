package opscmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
)

func newDestinationsCmd(sf *storeFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "destinations",
		Short: "Grant a workspace its private webhook receivers, list and revoke the grants",
		Long: `Grant workspace W a private receiver of its webhooks: an address or a network
(and a port, or every port) that the SSRF guard refuses to every other
workspace, such as a receiver on the deployment's private network. W's
subscriptions may then name it, and their deliveries reach it; no other
workspace's may. A grant is in force at once, a revocation on every backend
within 2 seconds (at once on the backend whose Admin API made it). The
gateway's own listeners stay
refused whatever is granted, and a delivery to a granted receiver keeps its
status, never its answer, in W's delivery log. Each grant and revocation is
recorded in W's audit trail under your name.`,
	}
	cmd.AddCommand(newDestinationsListCmd(sf), newDestinationsGrantCmd(sf), newDestinationsRevokeCmd(sf))
	return cmd
}

func newDestinationsListCmd(sf *storeFlags) *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "list --workspace W",
		Short: "List the destinations granted to workspace W as JSON, in force or revoked, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printEvery(cmd, sf, func(ctx context.Context, p plane, cursor string) (admin.Page[admin.Destination], error) {
				page, err := p.ListDestinations(ctx, workspace, admin.PageQuery{Cursor: cursor, Limit: admin.MaxLimit})
				return page, notFound(err, "workspace", workspace)
			})
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace id")
	cmd.MarkFlagRequired("workspace")
	return cmd
}

func newDestinationsGrantCmd(sf *storeFlags) *cobra.Command {
	var workspace, destination string
	cmd := &cobra.Command{
		Use:   "grant --workspace W --destination ADDRESS[:PORT]|PREFIX",
		Short: "Let workspace W's webhooks reach an address (on a port, or every port) or a network, and print the grant",
		Example: `  hdc subscriptions destinations grant --workspace clinic-1 --destination 10.0.0.31:9999
  hdc subscriptions destinations grant --workspace clinic-1 --destination [fd00::31]:443
  hdc subscriptions destinations grant --workspace clinic-1 --destination 10.0.7.0/28    # every port`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := webhook.ParseDestination(destination)
			if err != nil {
				return fmt.Errorf("--destination: %w", err)
			}
			r := admin.DestinationRequest{Prefix: d.Prefix.String()}
			if d.Port != 0 {
				port := int(d.Port)
				r.Port = &port
			}
			return sf.withPlane(cmd, func(ctx context.Context, p plane) error {
				g, err := p.GrantDestination(ctx, workspace, r)
				if err != nil {
					return notFound(err, "workspace", workspace)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), g)
			})
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace id")
	cmd.Flags().StringVar(&destination, "destination", "", "the receiver: an address and port (10.0.0.31:9999, [fd00::31]:443), an address (every port) or a network (10.0.7.0/28)")
	cmd.MarkFlagRequired("workspace")
	cmd.MarkFlagRequired("destination")
	return cmd
}

func newDestinationsRevokeCmd(sf *storeFlags) *cobra.Command {
	var workspace, id string
	cmd := &cobra.Command{
		Use:   "revoke --workspace W --grant G",
		Short: "Revoke grant G of workspace W and print it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withPlane(cmd, func(ctx context.Context, p plane) error {
				d, err := p.RevokeDestination(ctx, workspace, id)
				if err != nil {
					return notFound(err, "grant", id)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), d)
			})
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace id")
	cmd.Flags().StringVar(&id, "grant", "", "the grant's id, as grant and list print it")
	cmd.MarkFlagRequired("workspace")
	cmd.MarkFlagRequired("grant")
	return cmd
}
