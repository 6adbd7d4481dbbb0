package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		if _, err := IssueFromDir(dir, Leaf{Role: role}, time.Hour, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := IssueFromDir(dir, Leaf{Role: "admin"}, time.Hour, false); err == nil {
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
			state, err := handshake(t, dir, tt.client, Leaf{Role: Backend}, Leaf{Role: tt.role})
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
	if _, err := IssueFromDir(dir, Leaf{Role: Edge}, time.Hour, true); err != nil {
		t.Fatal(err)
	}
}

// handshake runs a server with the files of server in serverDir and a
// client with those of client in clientDir, and returns the server's view.
func handshake(t *testing.T, serverDir, clientDir string, server, client Leaf) (tls.ConnectionState, error) {
	t.Helper()
	load := func(dir string, l Leaf) tls.Certificate {
		c, err := tls.LoadX509KeyPair(filepath.Join(dir, l.certFile()), filepath.Join(dir, l.keyFile()))
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
	srv := tls.Server(sc, &tls.Config{Certificates: []tls.Certificate{load(serverDir, server)},
		ClientCAs: pool(serverDir), ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13})
	cl := tls.Client(cc, &tls.Config{Certificates: []tls.Certificate{load(clientDir, client)},
		RootCAs: pool(serverDir), ServerName: contract.BackendServerName, MinVersion: tls.VersionTLS13})
	done := make(chan error, 1)
	go func() {
		err := cl.Handshake()
		if err == nil {
			_, err = io.ReadAll(cl) // TLS 1.3 reports a refused certificate on the first read
		}
		done <- err
	}()
	err := srv.Handshake()
	state := srv.ConnectionState()
	srv.Close()
	<-done
	return state, err
}

// TestNamedLeaves: a named leaf has files of its name and its name as
// subject, and proves its role as the role's own files do: an edge's
// named certificate is the edge's at the handshake, a backend's named
// certificate is verified under the backend's server name.
func TestNamedLeaves(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "tls")
	if err := InitDir(dir, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	for _, leaf := range []Leaf{{Role: Edge, Name: "edge-1"}, {Role: Backend, Name: "backend-2"}} {
		files, err := IssueFromDir(dir, leaf, time.Hour, false)
		if want := []string{leaf.Name + ".pem", leaf.Name + "-key.pem"}; err != nil || !slices.Equal(files, want) {
			t.Fatalf("IssueFromDir(%+v) = %q, %v; want %q", leaf, files, err, want)
		}
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, files[0]), filepath.Join(dir, files[1]))
		if err != nil {
			t.Fatal(err)
		}
		if cn := pair.Leaf.Subject.CommonName; cn != leaf.Name {
			t.Fatalf("%s: the subject is %q", leaf.Name, cn)
		}
	}
	state, err := handshake(t, dir, dir, Leaf{Role: Backend, Name: "backend-2"}, Leaf{Role: Edge, Name: "edge-1"})
	if err != nil || !contract.HasRole(&state, contract.RoleEdge) {
		t.Fatalf("the named edge at the named backend: %v, edge %v", err, contract.HasRole(&state, contract.RoleEdge))
	}
}

// TestIssueRefuses: a leaf's files are not replaced unless asked, and
// nothing is written under a name that is not a safe file name or that
// would be another file of the directory.
func TestIssueRefuses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "tls")
	if err := InitDir(dir, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	// Only the key of publisher-1 is there: its certificate is not written
	// either.
	if err := os.WriteFile(filepath.Join(dir, "publisher-1-key.pem"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		leaf Leaf
		err  error // wrapped, if set
	}{
		{"the role's own files", Leaf{Role: Edge}, fs.ErrExist},
		{"one of the files", Leaf{Role: Publisher, Name: "publisher-1"}, fs.ErrExist},
		{"a path", Leaf{Role: Edge, Name: "../edge"}, nil},
		{"a directory", Leaf{Role: Edge, Name: "a/b"}, nil},
		{"dot", Leaf{Role: Edge, Name: "."}, nil},
		{"dot dot", Leaf{Role: Edge, Name: ".."}, nil},
		{"a hidden file", Leaf{Role: Edge, Name: ".edge"}, nil},
		{"a leading dash", Leaf{Role: Edge, Name: "-edge"}, nil},
		{"a NUL", Leaf{Role: Edge, Name: "edge\x00"}, nil},
		{"a tab", Leaf{Role: Edge, Name: "edge\t1"}, nil},
		{"DEL", Leaf{Role: Edge, Name: "edge\x7f"}, nil},
		{"a letter beyond ASCII", Leaf{Role: Edge, Name: "ëdge"}, nil},
		{"the authority's certificate", Leaf{Role: Edge, Name: "ca"}, nil},
		{"a key's name", Leaf{Role: Edge, Name: "ca-key"}, nil},
		{"65 characters", Leaf{Role: Edge, Name: strings.Repeat("a", 65)}, nil},
		{"an operator without a name", Leaf{Role: Operator}, nil},
		{"an auditor without a name", Leaf{Role: Auditor}, nil},
		{"a space in a person's name", Leaf{Role: Operator, Name: "alice smith"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files, err := IssueFromDir(dir, tt.leaf, time.Hour, tt.err == nil)
			if err == nil || (tt.err != nil && !errors.Is(err, tt.err)) || files != nil {
				t.Fatalf("IssueFromDir(%+v) = %q, %v; want a refusal", tt.leaf, files, err)
			}
		})
	}
	t.Cleanup(func() {
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		want := []string{CAKeyFile, CAFile, KeyFile(Backend), CertFile(Backend), KeyFile(Edge), CertFile(Edge), "publisher-1-key.pem"}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("the directory holds %q, want %q", names, want)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "publisher-1-key.pem")); string(b) != "mine" {
			t.Error("publisher-1-key.pem was replaced")
		}
	})
	for _, name := range []string{"edge-1", "alice@example.org", "alice+ops@example.org", "A_b.c-9", strings.Repeat("a", 64)} {
		if err := checkName(name); err != nil {
			t.Errorf("checkName(%q): %v", name, err)
		}
	}
}
