// Package admintest serves the Admin API for the tests of its callers
// (hdc's remote mode), over the hop's mutual TLS as the backend's internal
// listener serves it.
package admintest

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Operator is the name of the operator's certificate ServeStore makes.
const Operator = "alice@example.org"

// API is an Admin API a test serves: its URL, and the files of the
// operator's certificate and of the hop's authority, as hdc's --cert,
// --key and --ca take them.
type API struct {
	URL, Cert, Key, CA string
}

// Args are the flags of hdc's remote mode that name the API.
func (a API) Args() []string {
	return []string{"--admin", a.URL, "--cert", a.Cert, "--key", a.Key, "--ca", a.CA}
}

// ServeStore serves the Admin API over st (the store as the backend opens
// it, sealed) until the test ends, with an authority made for the test
// and an operator's certificate of it.
func ServeStore(t testing.TB, st store.Store) API {
	t.Helper()
	dir := t.TempDir()
	if err := pki.InitDir(dir, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if _, err := pki.IssueFromDir(dir, pki.Leaf{Role: pki.Operator, Name: Operator}, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	url := Serve(t, admin.New(st, identity.New(st, 1), keyadmin.New(st)), admin.HandlerConfig{Idempotency: st}, dir)
	return API{URL: url, Cert: filepath.Join(dir, Operator+".pem"), Key: filepath.Join(dir, Operator+"-key.pem"),
		CA: filepath.Join(dir, pki.CAFile)}
}

// Serve serves the API of svc until the test ends and returns its URL:
// the backend's certificate of the hop's authority in dir (pki.InitDir),
// a client certificate of that authority asked for. cfg's HopTLS is set;
// with cfg.DenyList, a revoked certificate is refused first, as the
// backend's listeners refuse it.
func Serve(t testing.TB, svc *admin.Service, cfg admin.HandlerConfig, dir string) string {
	t.Helper()
	cfg.HopTLS = true
	if cfg.Log == nil {
		cfg.Log = zaptest.NewLogger(t)
	}
	mux := web.NewMux()
	admin.NewHandler(svc, cfg).Register(mux)
	var h http.Handler = mux
	if deny := cfg.DenyList; deny != nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := deny.Check(r); p != nil {
				problem.Write(w, p)
				return
			}
			mux.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewUnstartedServer(h)
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
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}, ClientAuth: tls.VerifyClientCertIfGiven,
		ClientCAs: pool}
}
