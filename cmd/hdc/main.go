// Command hdc is the Health Data Connect command line: operators manage keys,
// clients and sharing grants with it; API users encrypt, decrypt and call the
// API; `hdc up` runs the whole stack locally.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
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
		newEventsCmd(),
		newUpCmd(),
		newCallCmd(),
		newWebhooksCmd(),
		newTLSCmd(),
	)
	return root
}
