package clientcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/net/http/httpguts"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/apiclient"
	"github.com/health-data-connect/hdc/internal/contract"
)

// DefaultCredentials is where hdc up writes the demo client's credentials,
// relative to the directory it was started in.
const DefaultCredentials = "data/demo-credentials.json"

// callOptions are the flags of hdc call.
type callOptions struct {
	credentials, cacert                    string
	base, clientID, clientSecret, kid, key string
	enc                                    string
	sharingKey                             string
	encrypt                                bool
	data, file                             string
	query, header                          []string
	include                                bool
	output                                 string
}

const callLong = `Call the API like curl, as one client. hdc call logs in (caching the token pair
in your cache directory and refreshing it when it expires), sends the
request, decrypts an encrypted answer, and prints it. The exit status is
non-zero on an answer other than 2xx, whose problem is printed.

The client comes from --credentials (default ` + DefaultCredentials + `, written
by hdc up; an operator writes one with hdc clients create and hdc keys add
--credentials-out, docs/clients.md) or from --base, --client-id,
--client-secret, --kid and --key, which override the file's. The key's
content encryption is --enc, or the file's, or what the key's form says
(16 bytes: A128CBC-HS256; 32 bytes in base64url: A256GCM). Over HTTPS the
edge's certificate must chain to the system's authorities, or to --cacert
(curl's name), or to the file's ca.

With --encrypt the body is sent as a JWE envelope under the client's key
(a request without a body asks for an encrypted answer), and the login is
encrypted too. A successful answer must then be an envelope under that key,
or hdc call refuses it and exits non-zero; an unencrypted error answer (one
given before the edge knew the key) is printed marked as unauthenticated.

--data sends a JSON body: given inline (checked to be JSON), read from a
file with @FILE, or from standard input with -, as it is (the API checks
it). --file uploads a file: as multipart/form-data, or with --encrypt as
the encrypted JSON form {"file": "<base64>"}. Files and standard input are
streamed, never held in memory, encrypted as they are sent; the length is
sent ahead when it is known (a file, not a pipe).

-H adds a header field to the request, as curl's -H does ('Name: value',
repeatable): an Idempotency-Key, say. The fields hdc call sets itself
(Authorization, Content-Type, Content-Length, X-Encryption,
X-Encryption-Kid, Host) are refused.

-i prints the status line and headers of the answer, as received, before
its body. -o writes the body of a successful answer to a file (mode 0600),
decrypted, and only once the whole envelope is verified; an error answer
is printed instead and the file is not written. On a terminal, transfers
over 4 MiB show a progress bar on standard error.`

const callExample = `  # JSON inline, from a file, from standard input
  hdc call POST /notification/v1/connect/webhook/subscriptions --data '{"endpoint":"https://example.org/hooks"}'
  hdc call POST /notification/v1/connect/webhook/subscriptions --data @subscription.json
  jq -n '{endpoint: "https://example.org/hooks"}' | hdc call POST /notification/v1/connect/webhook/subscriptions -d -

  # An encrypted upload, streamed (a progress bar on a terminal), with a query parameter
  hdc call --encrypt POST /mr/api/v2/docs --file visit.mp3 --query task=smart

  # A change that the API makes once however often it is sent (docs/api.md, idempotency)
  hdc call -H "Idempotency-Key: $(uuidgen)" POST /notification/v1/connect/webhook/subscriptions --data @subscription.json

  # The status line and headers before the body, like curl -i
  hdc call -i --encrypt GET /notification/v1/connect/webhook/subscriptions

  # The decrypted record to a file instead of the terminal
  hdc call --encrypt GET /health/api/v1/fhir/retrieve --query identifier=<care_context_id> -o record.json

  # Another client, by flags; its secret and key from the environment rather than
  # --client-secret and --key, which the process list would show
  HDC_CLIENT_SECRET=… HDC_ENCRYPTION_KEY=… hdc call --base https://api.example.org --client-id <id> --kid <kid> --encrypt GET /notification/v1/connect/webhook/subscriptions

  # Another credentials file; an edge whose certificate a private authority issued
  hdc call --credentials clinic/credentials.json GET /notification/v1/connect/webhook/subscriptions
  hdc call --credentials clinic/credentials.json --cacert edge-ca.pem GET /notification/v1/connect/webhook/subscriptions

  # The workspace a sharing key opens
  hdc call --sharing-key <sharing_key> GET /health/api/v1/fhir/retrieve --query identifier=<care_context_id>`

func newCallCmd() *cobra.Command {
	var o callOptions
	cmd := &cobra.Command{
		Use:     "call [flags] METHOD PATH",
		Short:   "Call the API as a client: log in, encrypt, send, decrypt, print",
		Long:    callLong,
		Example: callExample,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(o, strings.ToUpper(args[0]), args[1], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.credentials, "credentials", "", "credentials file (default "+DefaultCredentials+" when no --base is given)")
	f.StringVar(&o.base, "base", "", "API base URL")
	f.StringVar(&o.clientID, "client-id", "", "client id")
	cli.EnvStringVar(f, &o.clientSecret, "client-secret", "HDC_CLIENT_SECRET", "", "client secret")
	f.StringVar(&o.kid, "kid", "", "key id of the encryption key")
	cli.EnvStringVar(f, &o.key, "key", keyEnv, "", "encryption key: 16 bytes for A128CBC-HS256, the JWK's k for A256GCM")
	f.StringVar(&o.enc, "enc", "", "the key's content encryption, A128CBC-HS256 or A256GCM (default: the credentials file's, or the key's form)")
	f.StringVar(&o.cacert, "cacert", "", "PEM `file` of the authority the edge's certificate chains to (default: the credentials file's ca, else the system's)")
	f.StringVar(&o.sharingKey, "sharing-key", "", "log in to the workspace this sharing key opens")
	f.BoolVar(&o.encrypt, "encrypt", false, "encrypt the request and ask for an encrypted answer")
	f.StringVarP(&o.data, "data", "d", "", "JSON body; @FILE reads it from a file, - from standard input")
	f.StringVar(&o.file, "file", "", "file to upload")
	f.StringArrayVar(&o.query, "query", nil, "query parameter k=v (repeatable)")
	f.StringArrayVarP(&o.header, "header", "H", nil, "header field 'Name: value' to send (repeatable)")
	f.BoolVarP(&o.include, "include", "i", false, "print the answer's status line and headers before its body")
	f.StringVarP(&o.output, "output", "o", "", "write the body of a successful answer to FILE (- for standard output) instead of printing it")
	cmd.MarkFlagsMutuallyExclusive("data", "file")
	return cmd
}

func runCall(o callOptions, method, path string, stdin io.Reader, out, errOut io.Writer) error {
	if !strings.HasPrefix(path, "/") {
		return errors.New("PATH must start with /")
	}
	creds, err := o.resolveCredentials()
	if err != nil {
		return err
	}
	query, err := parseQuery(o.query)
	if err != nil {
		return err
	}
	header, err := parseHeader(o.header)
	if err != nil {
		return err
	}
	b, err := o.requestBody(stdin)
	if err != nil {
		return err
	}
	c, err := apiclient.New(creds, o.sharingKey, o.encrypt)
	if err != nil {
		return err
	}
	c.Progress = apiclient.NewProgress(errOut)
	c.Header = header
	resp, err := c.Do(method, path, query, b)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if o.include {
		printHead(out, resp)
	}
	if o.output != "" && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return c.SaveAnswer(method, path, resp, o.output, out)
	}
	r, err := c.ReadAnswer(method, path, resp)
	if err != nil {
		return err
	}
	if note := c.Unauthenticated(r); note != "" {
		fmt.Fprintln(errOut, "hdc: "+note)
	}
	printBody(out, r.Body)
	if r.Status >= 300 {
		return fmt.Errorf("HTTP %d %s", r.Status, http.StatusText(r.Status))
	}
	return nil
}

// parseQuery parses the --query parameters.
func parseQuery(kvs []string) (url.Values, error) {
	query := url.Values{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--query %q: want k=v", kv)
		}
		query.Add(k, v)
	}
	return query, nil
}

// ownFields are the header fields hdc call sets itself, which -H may not
// set: a second value would contradict the first.
var ownFields = []string{"Authorization", "Content-Type", "Content-Length", "Transfer-Encoding", "Host",
	contract.HeaderEncryption, contract.HeaderEncryptionKid}

// parseHeader parses the -H fields, 'Name: value' as curl takes them. An
// error names the field, never its value, which may be a secret.
func parseHeader(fields []string) (http.Header, error) {
	h := http.Header{}
	for _, f := range fields {
		name, value, ok := strings.Cut(f, ":")
		value = strings.TrimSpace(value)
		switch {
		case !ok || !httpguts.ValidHeaderFieldName(name):
			return nil, fmt.Errorf("-H: want 'Name: value', a field's name of letters, digits and !#$%%&'*+-.^_`|~")
		case !httpguts.ValidHeaderFieldValue(value):
			return nil, fmt.Errorf("-H %s: the value holds a control character", name)
		case slices.ContainsFunc(ownFields, func(own string) bool { return strings.EqualFold(own, name) }):
			return nil, fmt.Errorf("-H %s: hdc call sets this field itself", name)
		}
		h.Add(name, value)
	}
	return h, nil
}

// requestBody is the body --data or --file names, or nil.
func (o callOptions) requestBody(stdin io.Reader) (*apiclient.Body, error) {
	switch {
	case o.file != "":
		src, err := apiclient.FileSource(o.file)
		if err != nil {
			return nil, err
		}
		return apiclient.UploadBody(src), nil
	case o.data == "-":
		return apiclient.StreamBody(apiclient.StdinSource(stdin)), nil
	case strings.HasPrefix(o.data, "@"):
		src, err := apiclient.FileSource(o.data[1:])
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		return apiclient.StreamBody(src), nil
	case o.data != "":
		if !json.Valid([]byte(o.data)) {
			return nil, errors.New("--data is not valid JSON")
		}
		return apiclient.JSONBody([]byte(o.data)), nil
	}
	return nil, nil
}

// resolveCredentials reads the credentials file, if any, and lets flags
// override its fields.
func (o callOptions) resolveCredentials() (apiclient.Credentials, error) {
	var c apiclient.Credentials
	path := o.credentials
	if path == "" && o.base == "" {
		path = DefaultCredentials
	}
	if path != "" {
		var err error
		if c, err = apiclient.ReadCredentials(path); err != nil {
			return c, fmt.Errorf("reading credentials: %w (run hdc up, or pass --credentials, or --base, --client-id and --client-secret)", err)
		}
	}
	for dst, v := range map[*string]string{&c.BaseURL: o.base, &c.ClientID: o.clientID,
		&c.ClientSecret: o.clientSecret, &c.Kid: o.kid, &c.EncryptionKey: o.key, &c.Enc: o.enc} {
		if v != "" {
			*dst = v
		}
	}
	if o.cacert != "" {
		pem, err := os.ReadFile(o.cacert)
		if err != nil {
			return c, fmt.Errorf("--cacert: %w", err)
		}
		c.CA = string(pem)
	}
	return c, missing(c)
}

// missing names what c lacks for a call: a base URL, a client id, a
// client secret.
func missing(c apiclient.Credentials) error {
	var lacks []string
	for _, f := range []struct{ v, what string }{{c.BaseURL, "a base URL (--base, or base_url)"},
		{c.ClientID, "a client id (--client-id, or client_id)"}, {c.ClientSecret, "a client secret (--client-secret, or client_secret)"}} {
		if f.v == "" {
			lacks = append(lacks, f.what)
		}
	}
	if len(lacks) > 0 {
		return fmt.Errorf("the call needs %s", strings.Join(lacks, " and "))
	}
	return nil
}

// printBody prints JSON indented and anything else as it is.
func printBody(w io.Writer, b []byte) {
	var buf bytes.Buffer
	if json.Indent(&buf, b, "", "  ") == nil {
		buf.WriteByte('\n')
		_, _ = w.Write(buf.Bytes())
		return
	}
	_, _ = w.Write(b)
}

// printHead prints an answer's status line and headers, then an empty
// line, as curl -i does.
func printHead(w io.Writer, resp *http.Response) {
	fmt.Fprintf(w, "%s %s\r\n", resp.Proto, resp.Status)
	_ = resp.Header.Write(w)
	_, _ = io.WriteString(w, "\r\n")
}
