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
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/hopclient"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// publishTimeout bounds a publication at one listener: connecting and
// the wait for its answer.
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
	ev   webhook.Event
	data string
	// internal lists the backends' internal listeners, space-separated,
	// as the edge's HDC_BACKEND_INTERNAL does.
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

--backend-internal lists the backends' internal listeners, space-separated, as the
edge's HDC_BACKEND_INTERNAL does. They are tried in order, the next one only when
the one tried certainly did not publish the event: it could not be reached (no
connection, or a TLS handshake that failed: nothing was sent), or it answered 500
(its transaction failed) or 503 (it does not serve). Any other answer, a 4xx
included, is the answer. A listener whose connection failed after the event was
sent, or that answered another 5xx (a proxy's 502 or 504), may have published it:
no other is tried, since publishing again would make a second event, of an id of
its own, that no subscriber could tell from the first. Each listener that failed
is named on standard error, with why.

Over https, the listener requires a publisher's certificate of the hop's authority
(hdc tls issue --role publisher): by default the one hdc up leaves in its data
directory (--data-dir, HDC_DATA, else ./data), under tls/.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pub, err := p.send(cmd.Context(), cmd.ErrOrStderr())
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
		"base URLs of the backends' internal listeners, space-separated, tried in order")
	p.hop.flags(f)
	for _, name := range []string{"workspace", "type", "data"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

// send posts the event to the internal listeners, one after the other
// until one publishes it or may have (hopclient, with the publication's
// rule: unserved), and returns what the backend published. It tells warn
// of each listener that did not.
func (p *publication) send(ctx context.Context, warn io.Writer) (webhook.Published, error) {
	if !json.Valid([]byte(p.data)) {
		return webhook.Published{}, errors.New("--data is not JSON")
	}
	p.ev.Data = json.RawMessage(p.data)
	body, err := json.Marshal(p.ev)
	if err != nil {
		return webhook.Published{}, err
	}
	client, err := p.client(warn)
	if err != nil {
		return webhook.Published{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, client.URL(contract.PathEvents), bytes.NewReader(body))
	if err != nil {
		return webhook.Published{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	telemetry.InjectEnv(req.Header)
	res, err := (&http.Client{Transport: client}).Do(req)
	var may *hopclient.MayHaveArrived
	switch {
	case errors.As(err, &may):
		return webhook.Published{}, mayHavePublished(may.Backend, fmt.Errorf("the event was sent, then: %w", may.Err))
	case err != nil:
		return webhook.Published{}, fmt.Errorf("no listener published the event: %w", unquoted(err))
	}
	defer res.Body.Close()
	return readPublished(res)
}

// client returns the hop's client of the internal listeners that
// --backend-internal lists, space-separated as the edge's Caddyfile
// splits HDC_BACKEND_INTERNAL, each an http or https URL with a host,
// checked before any is asked. It tells warn of each listener it moves
// on from.
func (p *publication) client(warn io.Writer) (*hopclient.Transport, error) {
	listeners := strings.Fields(p.internal)
	if len(listeners) == 0 {
		return nil, errors.New("--backend-internal (HDC_BACKEND_INTERNAL) names no listener")
	}
	if err := hopclient.Check(listeners); err != nil {
		return nil, fmt.Errorf("--backend-internal (HDC_BACKEND_INTERNAL): %w; the listeners are space-separated", err)
	}
	next, err := p.hop.transport(slices.ContainsFunc(listeners, func(l string) bool { return strings.HasPrefix(l, "https://") }))
	if err != nil {
		return nil, err
	}
	return hopclient.New(next, listeners, hopclient.Config{Attempt: publishTimeout, Unserved: unserved,
		Skipped: func(_ string, err error) { fmt.Fprintf(warn, "hdc: %v; trying the next listener\n", err) }})
}

// unserved reports whether a listener's answer of status says that it
// certainly did not publish the event, so that another may: 500, its
// transaction undone, or 503, it does not serve. Another 5xx (a proxy's
// 502 or 504) may come once the event was published.
func unserved(status int) bool {
	return status == http.StatusInternalServerError || status == http.StatusServiceUnavailable
}

// readPublished reads a listener's answer to a publication, naming the
// listener, never its password or query.
func readPublished(res *http.Response) (webhook.Published, error) {
	name := res.Request.URL.Scheme + "://" + res.Request.URL.Host
	var pub webhook.Published
	answer, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	switch {
	case res.StatusCode >= 500:
		return pub, mayHavePublished(name, answerError(res, answer))
	case res.StatusCode != http.StatusAccepted:
		return pub, fmt.Errorf("%s: %w", name, answerError(res, answer))
	case err != nil:
		return pub, fmt.Errorf("%s published the event, but its answer did not arrive whole: %w", name, err)
	}
	if err := json.Unmarshal(answer, &pub); err != nil {
		return pub, fmt.Errorf("%s published the event, but its answer is not one: %w", name, err)
	}
	return pub, nil
}

// mayHavePublished is the error of a listener that may have published the
// event, for why: no other is asked.
func mayHavePublished(name string, why error) error {
	return fmt.Errorf("%s may have published the event (%w): not trying another listener, "+
		"which would publish it a second time", name, why)
}

// unquoted returns the error of a *url.Error without the URL it quotes,
// which may hold a password or a query.
func unquoted(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// publisherTLS are the files of a publisher's TLS to the internal
// listener.
type publisherTLS struct{ data, cert, key, ca string }

func (p *publisherTLS) flags(f *pflag.FlagSet) {
	cli.EnvStringVar(f, &p.data, "data-dir", "HDC_DATA", storage.DefaultDataDir,
		"data directory whose tls/ holds the defaults of --cert, --key and --ca, as hdc up leaves them")
	cli.EnvStringVar(f, &p.cert, "cert", "HDC_PUBLISHER_CERT", "", "PEM `file` of a publisher's certificate; default <data>/tls/publisher.pem")
	cli.EnvStringVar(f, &p.key, "key", "HDC_PUBLISHER_KEY", "", "PEM `file` of its private key; default <data>/tls/publisher-key.pem")
	cli.EnvStringVar(f, &p.ca, "ca", "HDC_HOP_CA", "", "PEM `file` of the hop's authority; default <data>/tls/ca.pem")
}

// transport returns the transport of a publication: with hop set, for
// https with the publisher's certificate, trusting the hop's authority
// alone.
func (p *publisherTLS) transport(hop bool) (http.RoundTripper, error) {
	if !hop {
		return http.DefaultTransport, nil
	}
	dir := filepath.Join(p.data, "tls")
	cfg, err := pki.ClientTLS(cmp.Or(p.cert, filepath.Join(dir, pki.CertFile(pki.Publisher))),
		cmp.Or(p.key, filepath.Join(dir, pki.KeyFile(pki.Publisher))), cmp.Or(p.ca, filepath.Join(dir, pki.CAFile)))
	if err != nil {
		return nil, fmt.Errorf("the publisher's TLS (--cert, --key, --ca): %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return tr, nil
}

// answerError words a refused publication: the problem's code and detail
// when the backend sent one, the status otherwise.
func answerError(res *http.Response, body []byte) error {
	var p problem.Problem
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == problem.ContentType && json.Unmarshal(body, &p) == nil {
		return fmt.Errorf("the backend refused the event (%d %s): %s", res.StatusCode, p.Code, p.Detail)
	}
	return fmt.Errorf("it answered %s", res.Status)
}
