// Package upcmd is hdc up: the whole stack, the backend and the edge (Caddy
// with the hdc modules), in one process on this machine, with a demo
// client whose credentials hdc call reads.
package upcmd

import "github.com/spf13/cobra"

// Commands returns hdc up.
func Commands() []*cobra.Command {
	return []*cobra.Command{newUpCmd()}
}
