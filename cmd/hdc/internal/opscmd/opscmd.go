// Package opscmd is hdc's commands for the operators: the clients, sharing
// grants and keys in the backend's database (or a key registry file), the
// keeper that seals their secrets, the audit trail, the hop's certificates,
// the publication of webhook events and the webhook subscriptions of every
// workspace.
package opscmd

import "github.com/spf13/cobra"

// Commands returns the operators' commands.
func Commands() []*cobra.Command {
	return []*cobra.Command{newKeysCmd(), newClientsCmd(), newSharingCmd(), newAuditCmd(), newEventsCmd(),
		newTLSCmd(), newKeeperCmd(), newFleetCmd(), newWhoamiCmd(), newSubscriptionsCmd(), newConsoleCmd()}
}
