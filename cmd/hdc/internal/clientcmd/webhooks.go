package clientcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/spf13/cobra"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func newWebhooksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhooks",
		Short: "Tools for webhook subscribers",
	}
	cmd.AddCommand(newWebhooksListenCmd())
	return cmd
}

func newWebhooksListenCmd() *cobra.Command {
	var listen, signingKey string
	cmd := &cobra.Command{
		Use:   "listen [--listen 127.0.0.1:9999] [--signing-key KEY]",
		Short: "Receive webhook deliveries, verify their signatures and print them",
		Long: `Run a webhook receiver that prints every delivery it gets. With --signing-key
(the subscription's signing_key) it verifies the Standard Webhooks signature
with the Standard Webhooks library and answers 401 to a delivery that fails;
otherwise it accepts everything. Stop it with Ctrl-C.

The backend refuses to deliver to loopback, private and other special
addresses unless it allows them: run hdc up with --allow-loopback-webhooks for
a receiver on this machine. A deployment's backend allows loopback to every
workspace with HDC_WEBHOOK_ALLOW_NETS (--webhook-allow-nets, 127.0.0.0/8,::1),
and a receiver on a private network to its own workspace alone, which an
operator grants: hdc subscriptions destinations grant --workspace W
--destination 10.1.2.3:9999. The receiver's answers are not shown in the delivery
log, only its statuses.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			return serveWebhooks(ctx, ln, signingKey, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:9999", "address to listen on")
	cmd.Flags().StringVar(&signingKey, "signing-key", "", "the subscription's signing_key, to verify signatures")
	return cmd
}

// serveWebhooks prints the deliveries that reach ln until ctx is done,
// verifying their signatures with signingKey when it is given.
func serveWebhooks(ctx context.Context, ln net.Listener, signingKey string, out io.Writer) error {
	var verifier *standardwebhooks.Webhook
	if signingKey != "" {
		// A whsec_ secret keys the signature with its decoded bytes, a raw
		// key with its own: the backend's reading of signing_key.
		key, err := contract.SigningKeyBytes(signingKey)
		if err != nil {
			return fmt.Errorf("--signing-key: %w", err)
		}
		if verifier, err = standardwebhooks.NewWebhookRaw(key); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "listening on http://%s\n", ln.Addr())
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		verdict := "unsigned"
		switch {
		case verifier == nil && r.Header.Get("webhook-signature") != "":
			verdict = "signed (not verified: no --signing-key)"
		case verifier != nil:
			if err := verifier.Verify(body, r.Header); err != nil {
				fmt.Fprintf(out, "%s %s  REJECTED: %v\n", time.Now().Format(time.TimeOnly), r.Header.Get("webhook-id"), err)
				http.Error(w, "bad signature", http.StatusUnauthorized)
				return
			}
			verdict = "signature verified"
		}
		fmt.Fprintf(out, "%s %s  %s\n%s\n", time.Now().Format(time.TimeOnly), r.Header.Get("webhook-id"), verdict, body)
		w.WriteHeader(http.StatusNoContent)
	})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
