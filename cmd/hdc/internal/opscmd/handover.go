package opscmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/apiclient"
	"github.com/health-data-connect/hdc/internal/clientkey"
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

// write sets the file's fields for client with set, keeping what an
// earlier command wrote there for the same client; nothing when no file
// was asked for. It says on standard error where it wrote.
func (h handover) write(cmd *cobra.Command, client string, set func(*apiclient.Credentials)) error {
	if h.out == "" {
		return nil
	}
	c, err := apiclient.ReadCredentials(h.out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c = apiclient.Credentials{ClientID: client}
	case err != nil:
		return fmt.Errorf("--credentials-out: %w", err)
	case c.ClientID != client:
		return fmt.Errorf("--credentials-out %s holds client %s's credentials, not %s's", h.out, c.ClientID, client)
	}
	if h.baseURL != "" {
		c.BaseURL = h.baseURL
	}
	if h.edgeCA != "" {
		pem, err := os.ReadFile(h.edgeCA)
		if err != nil {
			return fmt.Errorf("--edge-ca: %w", err)
		}
		c.CA = string(pem)
	}
	set(&c)
	if err := c.Save(h.out); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "hdc: %s holds client %s's credentials: hand it over as you would the secret\n", h.out, client)
	return nil
}

// writeKey puts k in the credentials file, as the client's key.
func (h handover) writeKey(cmd *cobra.Command, k clientkey.Key) error {
	return h.write(cmd, k.ClientID, func(c *apiclient.Credentials) { c.SetKey(k) })
}
