package opscmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/contract"
)

func newClientsLimitsCmd(sf *storeFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "Show, set and clear a client's rate limits and daily upload quota",
		Long: `Show, set and clear client C's overrides of the edges' default limits: a rate
per route class (login, reads, writes, uploads) and a daily upload quota in
bytes. Every edge enforces a change within a second (the key plane's change
feed); the workspace's audit trail records it under your name.`,
	}
	cmd.AddCommand(newLimitsShowCmd(sf), newLimitsSetCmd(sf), newLimitsClearCmd(sf))
	return cmd
}

// limitsCmd is a limits command on client C: it prints what run returns.
func limitsCmd(sf *storeFlags, use, short string, run func(ctx context.Context, p adminapi.API, client string) (contract.ClientLimits, error)) *cobra.Command {
	var client string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				l, err := run(ctx, p, client)
				if err != nil {
					return notFound(err, "client", client)
				}
				return cli.PrintJSON(cmd.OutOrStdout(), l)
			})
		},
	}
	cmd.Flags().StringVar(&client, "client", "", "client id")
	cmd.MarkFlagRequired("client")
	return cmd
}

func newLimitsShowCmd(sf *storeFlags) *cobra.Command {
	cmd := limitsCmd(sf, "show --client C", "Print client C's overrides as JSON (none: the edges' defaults apply)",
		func(ctx context.Context, p adminapi.API, client string) (contract.ClientLimits, error) {
			return p.ClientLimits(ctx, client)
		})
	return cmd
}

func newLimitsSetCmd(sf *storeFlags) *cobra.Command {
	var rates []string
	var quota int64
	cmd := limitsCmd(sf, "set --client C [--rate CLASS=PER_SECOND:BURST]… [--upload-bytes-per-day N]",
		"Make these client C's overrides, in place of any it had",
		func(ctx context.Context, p adminapi.API, client string) (contract.ClientLimits, error) {
			l := contract.Limits{UploadBytesPerDay: quota}
			for _, s := range rates {
				class, r, err := parseRate(s)
				if err != nil {
					return contract.ClientLimits{}, err
				}
				if l.Rates == nil {
					l.Rates = map[contract.RouteClass]contract.Rate{}
				}
				l.Rates[class] = r
			}
			return p.SetClientLimits(ctx, client, l)
		})
	cmd.Flags().StringArrayVar(&rates, "rate", nil, "a class's rate, CLASS=PER_SECOND:BURST (writes=100:20), or CLASS=none for no limit; repeat for more classes")
	cmd.Flags().Int64Var(&quota, "upload-bytes-per-day", 0, "the client's daily upload quota in bytes (0: the default's)")
	return cmd
}

func newLimitsClearCmd(sf *storeFlags) *cobra.Command {
	cmd := limitsCmd(sf, "clear --client C", "Remove client C's overrides: the edges' defaults apply to it again",
		func(ctx context.Context, p adminapi.API, client string) (contract.ClientLimits, error) {
			return p.ClearClientLimits(ctx, client)
		})
	return cmd
}

// parseRate reads a rate as hdc clients limits set takes one,
// CLASS=PER_SECOND:BURST (writes=100:20), or CLASS=none for no limit, and
// checks it as SetClientLimits does.
func parseRate(s string) (contract.RouteClass, contract.Rate, error) {
	class, value, ok := strings.Cut(s, "=")
	if !ok {
		return "", contract.Rate{}, errors.New("a rate is CLASS=PER_SECOND:BURST (writes=100:20) or CLASS=none")
	}
	var r contract.Rate
	if value != "none" {
		perSecond, burst, ok := strings.Cut(value, ":")
		var errs [2]error
		r.PerSecond, errs[0] = strconv.ParseFloat(perSecond, 64)
		r.Burst, errs[1] = strconv.Atoi(burst)
		if !ok || errs[0] != nil || errs[1] != nil {
			return "", contract.Rate{}, fmt.Errorf("rate %q: want PER_SECOND:BURST, such as 100:20", value)
		}
	}
	l := contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.RouteClass(class): r}}
	return contract.RouteClass(class), r, l.Check()
}
