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

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit/fakeplane"
)

// keyPlane is the backend's key plane as an edge that takes its keys from
// the backend sees it: testkit's KeyPlane (the two routes, PathKey and
// PathKeyChanges, as the backend serves them) holding the bench's keys,
// on a loopback listener of the hop's mutual TLS, with the certificates of
// an authority made for the run. The A256GCM key lives only there; the
// bench's registry file holds the A128CBC-HS256 key.
type keyPlane struct {
	hop string // the hop's directory: the authority, the backend's and the edge's certificates
	url string
	srv *http.Server
	tls *tls.Config // the backend's side of the hop
}

// startKeyPlane makes a hop authority under dir and serves a key plane
// holding keys, all of benchClient.
func startKeyPlane(dir string, keys ...benchKey) (*keyPlane, error) {
	hop := filepath.Join(dir, "tls")
	if err := pki.InitDir(hop, 24*time.Hour, false); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(hop, pki.CertFile(pki.Backend)), filepath.Join(hop, pki.KeyFile(pki.Backend)))
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(hop, pki.CAFile))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("the hop's authority holds no certificate")
	}
	plane := fakeplane.NewKeyPlane()
	for _, k := range keys {
		plane.SetKey(contract.ClientKey{Kid: k.kid, ClientID: benchClient, Secret: k.secret, Enc: k.key.Enc(), Status: clientkey.Active})
	}
	p := &keyPlane{hop: hop, tls: &tls.Config{
		MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
	}}
	p.srv, p.url, err = p.serveHop(edgeOnly(plane))
	return p, err
}

// serveHop serves h on a loopback listener of the hop's mutual TLS, HTTP/2
// or HTTP/1.1 as the client asks, as the backend's listeners do.
func (p *keyPlane) serveHop(h http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, TLSConfig: p.tls.Clone()}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return srv, "https://" + ln.Addr().String(), nil
}

// edgeOnly serves h to a client whose certificate names the edge's role,
// as the backend's internal listener does.
func edgeOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !contract.FromEdge(r.TLS) {
			http.Error(w, "not the edge", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// keysBlock is the keys block of an edge's hdc option that reads its keys
// from this key plane, over the hop.
func (p *keyPlane) keysBlock() string {
	return "\t\t\tbackend " + p.url + "\n" +
		"\t\t\ttls_client_auth " + filepath.Join(p.hop, pki.CertFile(pki.Edge)) + " " + filepath.Join(p.hop, pki.KeyFile(pki.Edge)) + "\n" +
		"\t\t\ttls_ca " + filepath.Join(p.hop, pki.CAFile) + "\n" +
		"\t\t\ttls_server_name " + contract.BackendServerName + "\n"
}

// transportBlock is reverse_proxy's transport of the hop to a server of
// serveHop, as the reference Caddyfile writes it.
func (p *keyPlane) transportBlock() string {
	return "\t\ttransport http {\n" +
		"\t\t\ttls_client_auth " + filepath.Join(p.hop, pki.CertFile(pki.Edge)) + " " + filepath.Join(p.hop, pki.KeyFile(pki.Edge)) + "\n" +
		"\t\t\ttls_trust_pool file " + filepath.Join(p.hop, pki.CAFile) + "\n" +
		"\t\t\ttls_server_name " + contract.BackendServerName + "\n" +
		"\t\t}\n"
}

func (p *keyPlane) close() { _ = p.srv.Close() }
