// Package clientcmd is hdc's commands for the API's clients: hdc call,
// which calls the API as one client (package apiclient), hdc jwe, which
// encrypts and decrypts the API's envelopes, and hdc webhooks, a receiver
// for a subscription's deliveries.
package clientcmd

import "github.com/spf13/cobra"

// Commands returns the clients' commands.
func Commands() []*cobra.Command {
	return []*cobra.Command{newCallCmd(), newJWECmd(), newWebhooksCmd()}
}
