package opscmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/apiclient"
)

// handover is the credentials file a command writes for a client to be
// handed (--credentials-out): what hdc call reads, and what a client
// library needs (docs/clients.md). hdc clients create writes the client's
// id and secret in it; hdc keys add and rotate its key, into the same file.
type handover struct {
	out, baseURL, edgeCA string
}

// register adds --credentials-out, --base-url and --edge-ca to cmd.
func (h *handover) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&h.out, "credentials-out", "", "write, or bring up to date, the client's credentials `file` (mode 0600), which hdc call --credentials reads")
	cli.EnvStringVar(f, &h.baseURL, "base-url", "HDC_BASE_URL", "", "the API's base URL, for the credentials file (https://api.example.org)")
	f.StringVar(&h.edgeCA, "edge-ca", "", "PEM `file` of the authority of the edge's certificate, for the credentials file, when it is a private one")
}

// write hands client what was issued in the file (apiclient.Handover),
// keeping what an earlier command wrote there for the same client. It says
// on standard error where it wrote.
func (h handover) write(cmd *cobra.Command, client string, issued apiclient.Handover) error {
	c, err := apiclient.ReadCredentials(h.out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c = apiclient.Credentials{ClientID: client}
	case err != nil:
		return fmt.Errorf("--credentials-out: %w", err)
	case c.ClientID != client:
		return fmt.Errorf("--credentials-out %s holds client %s's credentials, not %s's", h.out, c.ClientID, client)
	}
	issued.BaseURL = h.baseURL
	if h.edgeCA != "" {
		pem, err := os.ReadFile(h.edgeCA)
		if err != nil {
			return fmt.Errorf("--edge-ca: %w", err)
		}
		issued.EdgeCA = string(pem)
	}
	c.Hand(issued)
	if err := c.Save(h.out); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "hdc: %s holds client %s's credentials: hand it over as you would the secret\n", h.out, client)
	return nil
}

// handedOver is what a command prints of credentials it wrote to the
// file: which client, key and file, never the secret, which only the file
// holds.
type handedOver struct {
	ClientID        string `json:"client_id"`
	WorkspaceID     string `json:"workspace_id,omitempty"`
	Kid             string `json:"kid,omitempty"`
	Enc             string `json:"enc,omitempty"`
	RequireFresh    bool   `json:"require_fresh,omitempty"`
	CredentialsFile string `json:"credentials_file"`
}

// hand prints answer, which holds a secret, when no file was asked for;
// else it writes what was issued into the file and prints only said,
// naming the file. When the file cannot be written it prints answer after
// all, since the secret is nowhere else, and returns the error.
func (h handover) hand(cmd *cobra.Command, client string, answer any, said handedOver, issued apiclient.Handover) error {
	if h.out == "" {
		return cli.PrintJSON(cmd.OutOrStdout(), answer)
	}
	if err := h.write(cmd, client, issued); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "hdc: the credentials file was not written: the secret follows, shown this once")
		return errors.Join(err, cli.PrintJSON(cmd.OutOrStdout(), answer))
	}
	said.CredentialsFile = h.out
	return cli.PrintJSON(cmd.OutOrStdout(), said)
}

// checkNew refuses a file that exists already: a new client's
// credentials go to a file of their own.
func (h handover) checkNew() error {
	if h.out == "" {
		return nil
	}
	if _, err := os.Stat(h.out); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--credentials-out %s exists: a new client's credentials go to a new file", h.out)
	}
	return nil
}

// handKey prints the key k issued, or writes it into the credentials
// file and prints where, without its secret.
func (h handover) handKey(cmd *cobra.Command, k adminapi.IssuedKey) error {
	said := handedOver{ClientID: k.ClientID, Kid: k.Kid, Enc: k.Enc, RequireFresh: k.RequireFresh}
	key := k.Key()
	return h.hand(cmd, k.ClientID, k, said, apiclient.Handover{Key: &key})
}
