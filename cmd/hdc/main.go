// Command hdc is the Health Data Connect command line: operators manage keys,
// clients and sharing grants with it; API users encrypt, decrypt and call the
// API; `hdc up` runs the whole stack locally.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/internal/version"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "hdc:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "hdc",
		Short:         "Health Data Connect: operator and client command line",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newKeysCmd(),
		newJWECmd(),
		newClientsCmd(),
		newSharingCmd(),
		newAuditCmd(),
		newEventsCmd(),
		newUpCmd(),
		newCallCmd(),
		newWebhooksCmd(),
		newTLSCmd(),
		newKeeperCmd(),
		newVersionCmd(),
	)
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and VCS revision this hdc was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "hdc", version.Get())
			return err
		},
	}
}
