// Command hdc is the Health Data Connect command line: operators manage keys,
// clients and sharing grants with it; API users encrypt, decrypt and call the
// API; `hdc up` runs the whole stack locally.
//
// It only assembles the command groups, one package each by audience: the
// API's clients' (clientcmd), the operators' (opscmd) and the local
// stack's (upcmd).
package main

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/clientcmd"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/opscmd"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/upcmd"
)

func main() { cli.Main(commands()...) }

// commands returns hdc's commands, every group's.
func commands() []*cobra.Command {
	return slices.Concat(clientcmd.Commands(), opscmd.Commands(), upcmd.Commands())
}
