package hdctest

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
)

// StandIn stands in for a backend's public listener, on the hop's TLS with
// the backend's certificate: its /readyz answers 200, like a healthy
// backend's, and the test's handler answers every other request. An edge
// names it among its backends (site.StandIns) before the hop's
// certificates exist, so it listens at once and takes its certificate
// once Trust is called: until then its handshakes fail, and the edge's
// health checks leave it out.
type StandIn struct {
	// Addr is its address, for HDC_BACKEND.
	Addr string
	// Ready counts the /readyz requests it answered; Served the others.
	Ready, Served atomic.Int64
	cert          atomic.Pointer[tls.Certificate]
}

// NewStandIn listens on a loopback port and serves handler there, until
// the test ends.
func NewStandIn(t *testing.T, handler http.Handler) *StandIn {
	t.Helper()
	s := &StandIn{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+contract.PathReady, func(http.ResponseWriter, *http.Request) { s.Ready.Add(1) })
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Served.Add(1)
		handler.ServeHTTP(w, r)
	}))
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := s.cert.Load(); c != nil {
				return c, nil
			}
			return nil, errors.New("no certificate yet")
		}}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// Trust gives the stand-in the backend's certificate of the hop whose
// files are in dir.
func (s *StandIn) Trust(t *testing.T, dir string) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, pki.CertFile(pki.Backend)), filepath.Join(dir, pki.KeyFile(pki.Backend)))
	if err != nil {
		t.Fatal(err)
	}
	s.cert.Store(&cert)
}

// StartStackWithStandIns starts a stack whose edge balances over its
// backend and the stand-ins, with edgeEnv added to the edge's environment,
// and gives the stand-ins the hop's certificate.
func StartStackWithStandIns(t *testing.T, edgeEnv []string, standIns ...*StandIn) *Stack {
	t.Helper()
	at := PlainSite(t)
	for _, si := range standIns {
		at.StandIns = append(at.StandIns, si.Addr)
	}
	s := StartStackSite(t, at, nil, edgeEnv)
	for _, si := range standIns {
		si.Trust(t, s.Hop)
	}
	return s
}

// StartStackBeforeStandIn starts a stack whose edge sends the API's
// requests to the stand-in alone, with edgeEnv added to the edge's
// environment, and waits until the edge's health check has found the
// stand-in ready: a test sees there what crosses the hop.
func StartStackBeforeStandIn(t *testing.T, edgeEnv []string, si *StandIn) *Stack {
	t.Helper()
	at := PlainSite(t)
	at.StandIns, at.StandInsOnly = []string{si.Addr}, true
	s := StartStackSite(t, at, nil, edgeEnv)
	si.Trust(t, s.Hop)
	s.WaitFor("the edge to check the stand-in's /readyz", func() bool { return si.Ready.Load() >= 2 })
	return s
}
