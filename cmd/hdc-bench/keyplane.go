package main

import (
	"net/http"
	"path/filepath"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit/fakeplane"
)

// keyPlane is the backend's key plane as an edge that takes its keys from
// the backend sees it: testkit's KeyPlane (the two routes, PathKey and
// PathKeyChanges, as the backend serves them) holding the bench's keys,
// on a loopback listener of the run's hop. The A256GCM key lives only
// there; the bench's registry file holds the A128CBC-HS256 key.
type keyPlane struct {
	hop *benchHop
	url string
	srv *http.Server
}

// startKeyPlane serves a key plane holding keys, all of benchClient, on
// the hop.
func startKeyPlane(hop *benchHop, keys ...benchKey) (*keyPlane, error) {
	plane := fakeplane.NewKeyPlane()
	for _, k := range keys {
		plane.SetKey(clientkey.Key{Kid: k.kid, ClientID: benchClient, Secret: k.secret, Enc: k.key.Enc(), Status: clientkey.Active})
	}
	p := &keyPlane{hop: hop}
	var err error
	p.srv, p.url, err = hop.serve(edgeOnly(plane))
	return p, err
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
		"\t\t\ttls_client_auth " + filepath.Join(p.hop.dir, pki.CertFile(pki.Edge)) + " " + filepath.Join(p.hop.dir, pki.KeyFile(pki.Edge)) + "\n" +
		"\t\t\ttls_ca " + filepath.Join(p.hop.dir, pki.CAFile) + "\n" +
		"\t\t\ttls_server_name " + contract.BackendServerName + "\n"
}

func (p *keyPlane) close() { _ = p.srv.Close() }
