package opscmd

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
)

// deliveryFlags are the flags naming a subscription and one of its
// deliveries.
type deliveryFlags struct{ subscription, delivery string }

// register adds --subscription and, with one, --delivery to cmd.
func (f *deliveryFlags) register(cmd *cobra.Command, one bool) {
	cmd.Flags().StringVar(&f.subscription, "subscription", "", "subscription id, as list prints it")
	cmd.MarkFlagRequired("subscription")
	if one {
		cmd.Flags().StringVar(&f.delivery, "delivery", "", "delivery id, as deliveries prints it")
		cmd.MarkFlagRequired("delivery")
	}
}

func newDeliveriesCmd(sf *storeFlags) *cobra.Command {
	var f deliveryFlags
	var q adminapi.DeliveryQuery
	cmd := &cobra.Command{
		Use:   "deliveries --subscription S [--status …] [--event-type …] [--since T] [--until T] [--cursor C]",
		Short: "Print a page of subscription S's delivery log as JSON, newest first",
		Long: `Print a page of subscription S's delivery log as JSON, newest first: each
delivery's webhook-id, event type, status (pending, delivered, failed,
given_up), attempts and last outcome, as the subscription's client reads it.
The page's "next" is the --cursor of the page after it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				page, err := p.ListDeliveries(ctx, f.subscription, q)
				if err != nil {
					return notFound(err, "subscription", f.subscription)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), page)
			})
		},
	}
	f.register(cmd, false)
	fs := cmd.Flags()
	fs.StringVar(&q.Status, "status", "", "only deliveries of this status")
	fs.StringVar(&q.EventType, "event-type", "", "only deliveries of this event")
	fs.StringVar(&q.Since, "since", "", "only deliveries created at or after this RFC 3339 time")
	fs.StringVar(&q.Until, "until", "", "only deliveries created before this RFC 3339 time")
	fs.StringVar(&q.Cursor, "cursor", "", "the next of the page before")
	fs.IntVar(&q.Limit, "limit", 0, "at most this many deliveries (1 to 250; 0: 50)")
	return cmd
}

func newDeliveryCmd(sf *storeFlags) *cobra.Command {
	var f deliveryFlags
	cmd := &cobra.Command{
		Use:   "delivery --subscription S --delivery D",
		Short: "Print delivery D of subscription S with its attempts as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				d, err := p.GetDelivery(ctx, f.subscription, f.delivery)
				if err != nil {
					return notFound(err, "delivery", f.delivery)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), d)
			})
		},
	}
	f.register(cmd, true)
	return cmd
}

func newRedeliverCmd(sf *storeFlags) *cobra.Command {
	var f deliveryFlags
	cmd := &cobra.Command{
		Use:   "redeliver --subscription S --delivery D",
		Short: "Send delivery D of subscription S again now, with its webhook-id",
		Long: `Send delivery D of subscription S again now, with its webhook-id, so that the
receiver deduplicates it. The workspace's audit trail records the
redelivery under your name.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				d, err := p.Redeliver(ctx, f.subscription, f.delivery)
				if err != nil {
					return notFound(err, "delivery", f.delivery)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), d)
			})
		},
	}
	f.register(cmd, true)
	return cmd
}

func newRecoverCmd(sf *storeFlags) *cobra.Command {
	var f deliveryFlags
	var since string
	cmd := &cobra.Command{
		Use:   "recover --subscription S --since T",
		Short: "Send again every delivery of subscription S that failed since T",
		Long: `Send again every delivery of subscription S that failed or was given up since
T (RFC 3339), in the order they were created, and print how many. The
workspace's audit trail records the recovery under your name.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := time.Parse(time.RFC3339Nano, since)
			if err != nil {
				return errors.New("--since must be an RFC 3339 time, such as 2026-11-28T23:00:00Z")
			}
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				n, err := p.RecoverDeliveries(ctx, f.subscription, t)
				if err != nil {
					return notFound(err, "subscription", f.subscription)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), n)
			})
		},
	}
	f.register(cmd, false)
	cmd.Flags().StringVar(&since, "since", "", "the time from which failed deliveries are sent again (RFC 3339)")
	cmd.MarkFlagRequired("since")
	return cmd
}
