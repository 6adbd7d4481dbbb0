package opscmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
)

func newSubscriptionsCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "subscriptions",
		Short: "Show, enable, test and delete the webhook subscriptions of any workspace, read and redeliver their deliveries, grant their private receivers",
		Long: `Show, enable, test and delete the webhook subscriptions of any workspace: the
operators' view of what each workspace's clients registered through the
notification API. A subscription's signing key is never shown, only whether
it has one. Turn a disabled subscription back on, or send it a test event.
Read a subscription's delivery log and one delivery's attempts; send one
delivery again, or every one that failed since a time. Grant a workspace the
private receivers its subscriptions may name (destinations). A deletion, an
enabling, a test event, a redelivery, a recovery and a grant's change are
recorded in the workspace's audit trail under your name.`,
	}
	sf.register(cmd)
	cmd.AddCommand(newSubscriptionsListCmd(&sf), newSubscriptionsGetCmd(&sf), newSubscriptionsDeleteCmd(&sf),
		newSubscriptionsEnableCmd(&sf), newSubscriptionsTestCmd(&sf), newDeliveriesCmd(&sf), newDeliveryCmd(&sf), newRedeliverCmd(&sf), newRecoverCmd(&sf), newDestinationsCmd(&sf))
	return cmd
}

func newSubscriptionsListCmd(sf *storeFlags) *cobra.Command {
	var q adminapi.SubscriptionQuery
	var status string
	cmd := &cobra.Command{
		Use:   "list [--workspace W] [--status active|disabled] [--failing]",
		Short: "List the subscriptions of every workspace (or one) as JSON, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q.Status, q.Limit = status, adminapi.MaxLimit
			return printEvery(cmd, sf, func(ctx context.Context, p adminapi.API, cursor string) (adminapi.Page[adminapi.Subscription], error) {
				q.Cursor = cursor
				return p.ListSubscriptions(ctx, q)
			})
		},
	}
	cmd.Flags().StringVar(&q.Workspace, "workspace", "", "only the subscriptions of this workspace")
	cmd.Flags().StringVar(&status, "status", "", "only the subscriptions delivered to (active) or given up (disabled)")
	cmd.Flags().BoolVar(&q.Failing, "failing", false, "only the failing subscriptions: the last attempt failed, or a failure disabled it")
	return cmd
}

// subscriptionCmd is a command that takes subscription S (--subscription),
// does op with it through the API and prints what op returns as JSON.
func subscriptionCmd(sf *storeFlags, use, short, long string, op func(context.Context, adminapi.API, string) (any, error)) *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				v, err := op(ctx, p, id)
				if err != nil {
					return notFound(err, "subscription", id)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), v)
			})
		},
	}
	cmd.Flags().StringVar(&id, "subscription", "", "subscription id, as list prints it")
	cmd.MarkFlagRequired("subscription")
	return cmd
}

func newSubscriptionsGetCmd(sf *storeFlags) *cobra.Command {
	return subscriptionCmd(sf, "get --subscription S", "Print subscription S as JSON", "",
		func(ctx context.Context, p adminapi.API, id string) (any, error) { return p.GetSubscription(ctx, id) })
}

func newSubscriptionsDeleteCmd(sf *storeFlags) *cobra.Command {
	return subscriptionCmd(sf, "delete --subscription S", "Delete subscription S, of whatever workspace, with its pending deliveries", `Delete subscription S, of whatever workspace, with its pending deliveries: no
event is delivered to its endpoint from now on. The workspace's audit trail
records the deletion under your name.`,
		func(ctx context.Context, p adminapi.API, id string) (any, error) {
			sub, err := p.DeleteSubscription(ctx, id)
			if err != nil {
				return nil, err
			}
			return map[string]string{"id": sub.ID, "workspace_id": sub.WorkspaceID, "status": "deleted"}, nil
		})
}

func newSubscriptionsEnableCmd(sf *storeFlags) *cobra.Command {
	return subscriptionCmd(sf, "enable --subscription S", "Turn disabled subscription S, of whatever workspace, back on and print it as JSON", `Turn subscription S back on, as its client's PATCH {"enabled": true} does:
whether the backend disabled it (its endpoint failed for the disable period,
or answered 410) or its client did. Its failing period starts afresh and the
deliveries it kept are sent at once, each with its webhook-id. An active
subscription is printed as it is. The workspace's audit trail records the
enabling under your name.`,
		func(ctx context.Context, p adminapi.API, id string) (any, error) {
			return p.EnableSubscription(ctx, id)
		})
}

func newSubscriptionsTestCmd(sf *storeFlags) *cobra.Command {
	return subscriptionCmd(sf, "test --subscription S", "Send subscription S a test event now and print how the attempt went", `Send subscription S, of whatever workspace, a webhook.test event now, as its
client's POST …/subscriptions/{id}/test does: signed, through a backend's
delivery (its SSRF guard and timeouts), not retried, leaving no delivery.
Prints {"event_id", "outcome", "status", "duration_ms"}: delivered, or why
not (http_503, timeout, address_refused, …). A subscription gets 5 at once,
then one every 6 seconds, its client's and yours together. The workspace's
audit trail records the test event under your name. It needs the Admin API
(--admin): a test event goes out through a backend.`,
		func(ctx context.Context, p adminapi.API, id string) (any, error) { return p.TestSubscription(ctx, id) })
}
