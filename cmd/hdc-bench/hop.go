package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
)

// benchHop is the run's hop between the edge and the backend: an
// authority made for the run, the backend's side of its mutual TLS, which
// the bench's servers on the hop take (the key plane, the upstream behind
// reverse_proxy), and the edge's side as a Caddyfile names it.
type benchHop struct {
	dir string      // the authority, the backend's and the edge's certificates
	tls *tls.Config // the backend's side
}

// newBenchHop makes a hop authority and its certificates under dir.
func newBenchHop(dir string) (*benchHop, error) {
	if err := pki.InitDir(dir, 24*time.Hour, false); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, pki.CertFile(pki.Backend)), filepath.Join(dir, pki.KeyFile(pki.Backend)))
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(dir, pki.CAFile))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("the hop's authority holds no certificate")
	}
	return &benchHop{dir: dir, tls: &tls.Config{
		MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
	}}, nil
}

// serve serves h on a loopback listener of the hop's mutual TLS, HTTP/2
// or HTTP/1.1 as the client asks, as the backend's listeners do.
func (h *benchHop) serve(handler http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, TLSConfig: h.tls.Clone()}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return srv, "https://" + ln.Addr().String(), nil
}

// transportBlock is reverse_proxy's transport of the hop to a server of
// serve, as the reference Caddyfile writes it.
func (h *benchHop) transportBlock() string {
	return "\t\ttransport http {\n" +
		"\t\t\ttls_client_auth " + filepath.Join(h.dir, pki.CertFile(pki.Edge)) + " " + filepath.Join(h.dir, pki.KeyFile(pki.Edge)) + "\n" +
		"\t\t\ttls_trust_pool file " + filepath.Join(h.dir, pki.CAFile) + "\n" +
		"\t\t\ttls_server_name " + contract.BackendServerName + "\n" +
		"\t\t}\n"
}
