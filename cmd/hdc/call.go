package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// defaultCredentials is where hdc up writes the demo client's credentials,
// relative to the directory it was started in.
const defaultCredentials = "data/demo-credentials.json"

// callOptions are the flags of hdc call.
type callOptions struct {
	credentials                            string
	base, clientID, clientSecret, kid, key string
	sharingKey                             string
	encrypt                                bool
	data, file                             string
	query                                  []string
}

func newCallCmd() *cobra.Command {
	var o callOptions
	cmd := &cobra.Command{
		Use:   "call [flags] METHOD PATH",
		Short: "Call the API as a client: log in, encrypt, send, decrypt, print",
		Long: `Call the API like curl, as one client. hdc call logs in (caching the token pair
in your cache directory and refreshing it when it expires), sends the
request, decrypts an encrypted answer, and prints it. The exit status is
non-zero on an answer other than 2xx, whose problem is printed.

The client comes from --credentials (default ` + defaultCredentials + `, written
by hdc up) or from --base, --client-id, --client-secret, --kid and --key.

With --encrypt the body is sent as a JWE envelope under the client's key
(a request without a body asks for an encrypted answer), and the login is
encrypted too. A successful answer must then be an envelope under that key,
or hdc call refuses it and exits non-zero; an unencrypted error answer (one
given before the edge knew the key) is printed marked as unauthenticated. --file uploads a file: as multipart/form-data, or with
--encrypt as the encrypted JSON form {"file": "<base64>"}.`,
		Example: `  hdc call POST /notification/v1/connect/webhook/subscriptions --data '{"endpoint":"https://example.org/hooks"}'
  hdc call --encrypt POST /mr/api/v2/docs --file visit.mp3 --query task=smart
  hdc call --encrypt GET /health/api/v1/fhir/retrieve --query identifier=<care_context_id>`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(o, strings.ToUpper(args[0]), args[1], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.credentials, "credentials", "", "credentials file (default "+defaultCredentials+" when no --base is given)")
	f.StringVar(&o.base, "base", "", "API base URL")
	f.StringVar(&o.clientID, "client-id", "", "client id")
	f.StringVar(&o.clientSecret, "client-secret", envOr("HDC_CLIENT_SECRET", ""), "client secret (env HDC_CLIENT_SECRET)")
	f.StringVar(&o.kid, "kid", "", "key id of the encryption key")
	f.StringVar(&o.key, "key", envOr(keyEnv, ""), "encryption key, 16 bytes (env "+keyEnv+")")
	f.StringVar(&o.sharingKey, "sharing-key", "", "log in to the workspace this sharing key opens")
	f.BoolVar(&o.encrypt, "encrypt", false, "encrypt the request and ask for an encrypted answer")
	f.StringVar(&o.data, "data", "", "JSON body")
	f.StringVar(&o.file, "file", "", "file to upload")
	f.StringArrayVar(&o.query, "query", nil, "query parameter k=v (repeatable)")
	cmd.MarkFlagsMutuallyExclusive("data", "file")
	return cmd
}

func runCall(o callOptions, method, path string, out, errOut io.Writer) error {
	if !strings.HasPrefix(path, "/") {
		return errors.New("PATH must start with /")
	}
	creds, err := o.resolveCredentials()
	if err != nil {
		return err
	}
	query := url.Values{}
	for _, kv := range o.query {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("--query %q: want k=v", kv)
		}
		query.Add(k, v)
	}
	var b *body
	switch {
	case o.data != "":
		if !json.Valid([]byte(o.data)) {
			return errors.New("--data is not valid JSON")
		}
		b = jsonBody([]byte(o.data))
	case o.file != "":
		content, err := os.ReadFile(o.file)
		if err != nil {
			return err
		}
		b = &body{file: content, fileName: filepath.Base(o.file)}
	}
	c, err := newAPIClient(creds, o.sharingKey, o.encrypt)
	if err != nil {
		return err
	}
	resp, err := c.do(method, path, query, b)
	if err != nil {
		return err
	}
	if note := c.unauthenticated(resp); note != "" {
		fmt.Fprintln(errOut, "hdc: "+note)
	}
	printBody(out, resp.body)
	if resp.status >= 300 {
		return fmt.Errorf("HTTP %d %s", resp.status, http.StatusText(resp.status))
	}
	return nil
}

// resolveCredentials reads the credentials file, if any, and lets flags
// override its fields.
func (o callOptions) resolveCredentials() (demoCredentials, error) {
	var c demoCredentials
	path := o.credentials
	if path == "" && o.base == "" {
		path = defaultCredentials
	}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("reading credentials: %w (run hdc up, or pass --base, --client-id and --client-secret)", err)
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return c, fmt.Errorf("%s: %w", path, err)
		}
	}
	for dst, v := range map[*string]string{&c.BaseURL: o.base, &c.ClientID: o.clientID,
		&c.ClientSecret: o.clientSecret, &c.Kid: o.kid, &c.EncryptionKey: o.key} {
		if v != "" {
			*dst = v
		}
	}
	if c.BaseURL == "" || c.ClientID == "" || c.ClientSecret == "" {
		return c, errors.New("a base URL, a client id and a client secret are needed")
	}
	return c, nil
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
