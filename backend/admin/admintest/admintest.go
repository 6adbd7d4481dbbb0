// Package admintest serves the Admin API for the tests of its callers
// (hdc's remote mode), over the hop's mutual TLS as the backend's internal
// listener serves it.
package admintest

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/internal/pki"
)

// Serve serves the API of svc until the test ends and returns its URL:
// the backend's certificate of the hop's authority in dir (pki.InitDir),
// a client certificate of that authority asked for. cfg's HopTLS is set.
func Serve(t testing.TB, svc *admin.Service, cfg admin.HandlerConfig, dir string) string {
	t.Helper()
	cfg.HopTLS = true
	if cfg.Log == nil {
		cfg.Log = zaptest.NewLogger(t)
	}
	mux := web.NewMux()
	admin.NewHandler(svc, cfg).Register(mux)
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = serverTLS(t, dir)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

// serverTLS is the internal listener's TLS: the backend's certificate, a
// client certificate of the hop's authority if given.
func serverTLS(t testing.TB, dir string) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, pki.CertFile(pki.Backend)), filepath.Join(dir, pki.KeyFile(pki.Backend)))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, pki.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.VerifyClientCertIfGiven}
}
