package opscmd

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/console"
)

func newConsoleCmd() *cobra.Command {
	var sf storeFlags
	var listen, edgeCA string
	var allowRemote bool
	var handover console.Handover
	cmd := &cobra.Command{
		Use:   "console [--listen 127.0.0.1:8090]",
		Short: "Serve the operator console in your browser, over the Admin API with your certificate",
		Long: `Serve the operator console: the fleet, the clients and their keys, the webhook
subscriptions and the audit trail as web pages, on this machine. Every page
is a call of the Admin API with your certificate (--admin, --cert, --key,
--ca, or the admin.json of a running hdc up in --data), so the console can
do what the API lets you do, and an auditor's console shows no button that
changes anything.

It prints a URL with a one-time token: open it once, and the browser keeps
a session cookie. It listens on loopback only, unless --allow-remote, and
answers only under the names it listens on (127.0.0.1, localhost, [::1],
the host of --listen): any other Host is refused 421.

The credentials file it hands over after a new client or key (the file hdc
clients create --credentials-out writes) names the API's --base-url and,
when a private authority issued the edge's certificate, --edge-ca.`,
		Example: `  hdc console
  hdc console --listen 127.0.0.1:0 --admin https://backend:9081 --cert me.pem --key me-key.pem --ca ca.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := console.CheckListen(listen, allowRemote); err != nil {
				return err
			}
			if err := sf.chooseAdmin(); err != nil {
				return err
			}
			if !sf.Admin.remoteMode() {
				return errors.New("the console needs the Admin API: run it beside a running hdc up (--data), or pass --admin, --cert, --key and --ca")
			}
			c, err := sf.Admin.remote()
			if err != nil {
				return err
			}
			defer c.Close()
			if handover.EdgeCA, err = readEdgeCA(edgeCA); err != nil {
				return err
			}
			log, _ := zap.NewProduction(zap.IncreaseLevel(zap.WarnLevel))
			return console.Run(cmd.Context(), console.Config{Listen: listen, AllowRemote: allowRemote, API: c, Log: log,
				Out: cmd.OutOrStdout(), Handover: handover})
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&listen, "listen", console.DefaultListen, "`address` of the console, loopback unless --allow-remote")
	cli.EnvStringVar(cmd.Flags(), &handover.BaseURL, "base-url", "HDC_BASE_URL", "", "the API's base URL, for the credentials files it hands over (https://api.example.org)")
	cmd.Flags().StringVar(&edgeCA, "edge-ca", "", "PEM `file` of the authority of the edge's certificate, for the credentials files it hands over, when it is a private one")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "let --listen name an address beyond loopback (the console acts with your certificate: put TLS and your own access control in front)")
	return cmd
}

// readEdgeCA reads the certificate of the edge's authority in the file
// --edge-ca names, "" for none.
func readEdgeCA(file string) (string, error) {
	if file == "" {
		return "", nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--edge-ca: %w", err)
	}
	return string(pem), nil
}
