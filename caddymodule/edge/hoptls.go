package edge

import (
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/health-data-connect/hdc/internal/pki"
)

// HopTLS is the TLS of a request to the backend's internal listener over
// the hop: this edge's client certificate and key (the hop's, whose role
// the route requires), the authority that issued the backend's (instead of
// the system's roots), and the name its certificate must have.
// Placeholders such as {env.X} are replaced.
type HopTLS struct {
	TLSClientCert string `json:"tls_client_cert,omitempty"`
	TLSClientKey  string `json:"tls_client_key,omitempty"`
	TLSCA         string `json:"tls_ca,omitempty"`
	TLSServerName string `json:"tls_server_name,omitempty"`
}

// client returns an HTTP client with this TLS, nil when none is
// configured (Go's default then). A file that does not load is named,
// with what, the block it is set in.
func (h *HopTLS) client(repl *caddy.Replacer, what string) (*http.Client, error) {
	cert, key, ca := repl.ReplaceAll(h.TLSClientCert, ""), repl.ReplaceAll(h.TLSClientKey, ""), repl.ReplaceAll(h.TLSCA, "")
	if cert == "" && key == "" && ca == "" {
		return nil, nil
	}
	cfg, err := pki.ClientTLS(cert, key, ca)
	if err != nil {
		return nil, fmt.Errorf("hdc: %s: %w", what, err)
	}
	if name := repl.ReplaceAll(h.TLSServerName, ""); name != "" {
		cfg.ServerName = name
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr}, nil
}

// unmarshalCaddyfile reads the subdirective d is on when it is one of
// the hop's TLS, reporting whether it was.
func (h *HopTLS) unmarshalCaddyfile(d *caddyfile.Dispenser) (bool, error) {
	switch d.Val() {
	case "tls_client_auth":
		if !d.Args(&h.TLSClientCert, &h.TLSClientKey) || d.NextArg() {
			return true, d.ArgErr()
		}
		return true, nil
	case "tls_ca":
		return true, StringArg(d, &h.TLSCA)
	case "tls_server_name":
		return true, StringArg(d, &h.TLSServerName)
	}
	return false, nil
}
