package opscmd

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/health-data-connect/hdc/backend/operator"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// publishTimeout bounds a publication.
const publishTimeout = 30 * time.Second

// maxAnswer bounds what is read of the backend's answer.
const maxAnswer = 1 << 20

func newEventsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Publish webhook events to the backend",
	}
	cmd.AddCommand(newEventsPublishCmd())
	return cmd
}

// publication is what events publish sends, and where.
type publication struct {
	ev       webhook.Event
	data     string
	internal string
	hop      publisherTLS
}

func newEventsPublishCmd() *cobra.Command {
	var p publication
	cmd := &cobra.Command{
		Use:   "publish --workspace W --type T --data JSON",
		Short: "Publish an event; the backend delivers it to the workspace's subscriptions",
		Long: `Publish an event of type T (` + strings.Join(webhook.Events, ", ") + `)
in workspace W, with data JSON (an object), on the backend's internal listener. The
backend stores it with one delivery per matching subscription before answering, then
delivers it at least once. Prints {"id", "deliveries"}.

Over https, the listener requires a publisher's certificate of the hop's authority
(hdc tls issue --role publisher): by default the one hdc up leaves in its data
directory (--data-dir, HDC_DATA, else ./data), under tls/.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pub, err := p.send(cmd.Context())
			if err != nil {
				return err
			}
			return cli.PrintJSON(cmd.OutOrStdout(), pub)
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.ev.WorkspaceID, "workspace", "", "workspace id")
	f.StringVar(&p.ev.Type, "type", "", "event type: "+strings.Join(webhook.Events, ", "))
	f.StringVar(&p.data, "data", "", "the event's data, a JSON object")
	cli.EnvStringVar(f, &p.internal, "backend-internal", "HDC_BACKEND_INTERNAL", "https://127.0.0.1:9081",
		"base URL of the backend's internal listener")
	p.hop.flags(f)
	for _, name := range []string{"workspace", "type", "data"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

// send posts the event to the internal listener and returns what the
// backend published.
func (p *publication) send(ctx context.Context) (webhook.Published, error) {
	var pub webhook.Published
	if !json.Valid([]byte(p.data)) {
		return pub, errors.New("--data is not JSON")
	}
	p.ev.Data = json.RawMessage(p.data)
	body, err := json.Marshal(p.ev)
	if err != nil {
		return pub, err
	}
	url := strings.TrimSuffix(p.internal, "/") + contract.PathEvents
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return pub, fmt.Errorf("--backend-internal: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	telemetry.InjectEnv(req.Header)
	client, err := p.hop.client(url)
	if err != nil {
		return pub, err
	}
	res, err := client.Do(req)
	if err != nil {
		return pub, err
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return pub, err
	}
	if res.StatusCode != http.StatusAccepted {
		return pub, answerError(res, answer)
	}
	if err := json.Unmarshal(answer, &pub); err != nil {
		return pub, fmt.Errorf("unexpected answer from the backend: %w", err)
	}
	return pub, nil
}

// publisherTLS are the files of a publisher's TLS to the internal
// listener.
type publisherTLS struct{ data, cert, key, ca string }

func (p *publisherTLS) flags(f *pflag.FlagSet) {
	cli.EnvStringVar(f, &p.data, "data-dir", "HDC_DATA", operator.DefaultDataDir(),
		"data directory whose tls/ holds the defaults of --cert, --key and --ca, as hdc up leaves them")
	cli.EnvStringVar(f, &p.cert, "cert", "HDC_PUBLISHER_CERT", "", "PEM `file` of a publisher's certificate; default <data>/tls/publisher.pem")
	cli.EnvStringVar(f, &p.key, "key", "HDC_PUBLISHER_KEY", "", "PEM `file` of its private key; default <data>/tls/publisher-key.pem")
	cli.EnvStringVar(f, &p.ca, "ca", "HDC_HOP_CA", "", "PEM `file` of the hop's authority; default <data>/tls/ca.pem")
}

// client returns the HTTP client of a publication to url: over https,
// with the publisher's certificate, trusting the hop's authority alone.
func (p *publisherTLS) client(url string) (*http.Client, error) {
	client := &http.Client{Timeout: publishTimeout}
	if !strings.HasPrefix(url, "https://") {
		return client, nil
	}
	dir := filepath.Join(p.data, "tls")
	cfg, err := pki.ClientTLS(cmp.Or(p.cert, filepath.Join(dir, pki.CertFile(pki.Publisher))),
		cmp.Or(p.key, filepath.Join(dir, pki.KeyFile(pki.Publisher))), cmp.Or(p.ca, filepath.Join(dir, pki.CAFile)))
	if err != nil {
		return nil, fmt.Errorf("the publisher's TLS (--cert, --key, --ca): %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	client.Transport = tr
	return client, nil
}

// answerError words a refused publication: the problem's code and detail
// when the backend sent one, the status otherwise.
func answerError(res *http.Response, body []byte) error {
	var p problem.Problem
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == problem.ContentType && json.Unmarshal(body, &p) == nil {
		return fmt.Errorf("the backend refused the event (%d %s): %s", res.StatusCode, p.Code, p.Detail)
	}
	return fmt.Errorf("the backend answered %s", res.Status)
}
