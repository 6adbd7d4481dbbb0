// Package admintest serves the Admin API for the tests of its callers (the
// hdc commands in remote mode): over a store the test opened, on the
// hop's mutual TLS, with an authority and an operator's certificate made
// for the test.
package admintest

import (
	"crypto/tls"
	"crypto/x509"
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
)

// Operator is the name of the operator's certificate.
const Operator = "alice@example.org"

// API is an Admin API a test serves: its URL, and the files of the
// operator's certificate and of the hop's authority, as hdc's --cert,
// --key and --ca take them.
type API struct {
	URL, Cert, Key, CA string
}

// Serve serves the Admin API over st (the store as the backend opens it,
// sealed) until the test ends.
func Serve(t testing.TB, st store.Store) API {
	t.Helper()
	dir := t.TempDir()
	if err := pki.InitDir(dir, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if _, err := pki.IssueFromDir(dir, pki.Leaf{Role: pki.Operator, Name: Operator}, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	h := admin.NewHandler(admin.New(st, identity.New(st, 1), keyadmin.New(st)),
		admin.HandlerConfig{HopTLS: true, Idempotency: st, Log: zaptest.NewLogger(t)})
	mux := web.NewMux()
	h.Register(mux)
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = serverTLS(t, dir)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return API{URL: srv.URL, Cert: filepath.Join(dir, Operator+".pem"), Key: filepath.Join(dir, Operator+"-key.pem"),
		CA: filepath.Join(dir, pki.CAFile)}
}

// Args are the flags of hdc's remote mode that name the API.
func (a API) Args() []string {
	return []string{"--admin", a.URL, "--cert", a.Cert, "--key", a.Key, "--ca", a.CA}
}

// serverTLS is the internal listener's TLS: the backend's certificate of
// dir, and a client certificate of its authority if given.
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
