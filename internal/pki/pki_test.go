package pki

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// TestHandshake runs the hop's mutual TLS over a pipe with the files
// InitDir writes: the edge's certificate is accepted and named the edge's,
// the backend's is verified under its server name, and a certificate of
// another authority or the backend's own as a client certificate is
// refused.
func TestHandshake(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	if err := InitDir(dir, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "tls")
	if err := InitDir(other, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CAFile, CAKeyFile, CertFile(Edge), KeyFile(Edge), CertFile(Backend), KeyFile(Backend)} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, err, fi)
		}
	}
	for _, role := range []Role{Publisher, Parser, Scraper} {
		if err := IssueFromDir(dir, role, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := IssueFromDir(dir, "admin", time.Hour); err == nil {
		t.Fatal("a certificate of an unknown role was issued")
	}
	tests := []struct {
		name   string
		client string // directory and role of the client's certificate
		role   Role
		ok     bool
		has    contract.Role // the one role the certificate proves, if ok
	}{
		{"edge certificate", dir, Edge, true, contract.RoleEdge},
		{"publisher certificate", dir, Publisher, true, contract.RolePublisher},
		{"parser certificate", dir, Parser, true, contract.RoleParser},
		{"scraper certificate", dir, Scraper, true, contract.RoleScraper},
		{"another authority's edge", other, Edge, false, ""},
		{"the backend's certificate as a client", dir, Backend, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, err := handshake(t, dir, tt.client, tt.role)
			if (err == nil) != tt.ok {
				t.Fatalf("handshake: %v", err)
			}
			for _, r := range contract.Roles {
				if err == nil && contract.HasRole(&state, r) != (r == tt.has) {
					t.Fatalf("HasRole(%s) = %v", r, r != tt.has)
				}
			}
		})
	}
	if err := InitDir(dir, time.Hour, false); err == nil {
		t.Fatal("InitDir replaced an authority")
	}
	if err := IssueFromDir(dir, Edge, time.Hour); err != nil {
		t.Fatal(err)
	}
}

// handshake runs a server with the backend's files of serverDir and a
// client with role's files of clientDir, and returns the server's view.
func handshake(t *testing.T, serverDir, clientDir string, role Role) (tls.ConnectionState, error) {
	t.Helper()
	load := func(dir string, r Role) tls.Certificate {
		c, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile(r)), filepath.Join(dir, KeyFile(r)))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	pool := func(dir string) *x509.CertPool {
		b, _ := os.ReadFile(filepath.Join(dir, CAFile))
		p := x509.NewCertPool()
		p.AppendCertsFromPEM(b)
		return p
	}
	sc, cc := net.Pipe()
	server := tls.Server(sc, &tls.Config{Certificates: []tls.Certificate{load(serverDir, Backend)},
		ClientCAs: pool(serverDir), ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13})
	client := tls.Client(cc, &tls.Config{Certificates: []tls.Certificate{load(clientDir, role)},
		RootCAs: pool(serverDir), ServerName: contract.BackendServerName, MinVersion: tls.VersionTLS13})
	done := make(chan error, 1)
	go func() {
		err := client.Handshake()
		if err == nil {
			_, err = io.ReadAll(client) // TLS 1.3 reports a refused certificate on the first read
		}
		done <- err
	}()
	err := server.Handshake()
	state := server.ConnectionState()
	server.Close()
	<-done
	return state, err
}
