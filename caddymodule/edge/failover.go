package edge

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/health-data-connect/hdc/internal/hopclient"
)

// backendURLs are the URLs in bases once their placeholders are replaced:
// a placeholder may give several, space-separated.
func backendURLs(repl *caddy.Replacer, bases []string) []string {
	var urls []string
	for _, b := range bases {
		urls = append(urls, strings.Fields(repl.ReplaceAll(b, ""))...)
	}
	return urls
}

// backends returns the client of the backends whose internal listeners
// are at urls, over the hop's TLS, and the first one's URL with path p.
// The client fails over between them (hopclient): every backend serves
// the same data from the shared database, and the edge's own requests
// (the key plane's look-ups and change feed, the JWKS, the edge's
// reports) are reads or reports the backends may take twice, which the
// key plane's client marks repeatable. No attempt has a deadline of its
// own: the change feed's long poll holds its answer on purpose, and each
// request has its caller's.
func (h *HopTLS) backends(repl *caddy.Replacer, what string, urls []string, p string) (string, *http.Client, error) {
	client, err := h.client(repl, what)
	if err != nil {
		return "", nil, err
	}
	if client == nil {
		client = &http.Client{Transport: http.DefaultTransport}
	}
	t, err := hopclient.New(client.Transport, urls, hopclient.Config{})
	if err != nil {
		return "", nil, fmt.Errorf("hdc: %s: %w", what, err)
	}
	client.Transport = t
	return t.URL(p), client, nil
}
