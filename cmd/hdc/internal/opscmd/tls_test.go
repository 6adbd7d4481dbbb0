package opscmd

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
	"github.com/health-data-connect/hdc/internal/contract"
)

// hopDir makes a hop directory with hdc tls init and returns it.
func hopDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tls")
	if res := clitest.Run(t, nil, "tls", "init", "--dir", dir); res.Err != nil {
		t.Fatalf("tls init: %v: %s", res.Err, res.Stderr)
	}
	return dir
}

// leafCert reads the certificate of file in dir.
func leafCert(t *testing.T, dir, file string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM block", file)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestTLSIssueNamed: hdc tls issue --name writes NAME.pem and NAME-key.pem,
// mode 0600, whose certificate's subject is NAME and whose role is the
// one --role names, read as the hop reads it; it prints the files.
func TestTLSIssueNamed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		role, name string
		files      []string
		cn         string
	}{
		{"edge", "edge-1", []string{"edge-1.pem", "edge-1-key.pem"}, "edge-1"},
		{"backend", "backend-2", []string{"backend-2.pem", "backend-2-key.pem"}, "backend-2"},
		{"publisher", "alice@example.org", []string{"alice@example.org.pem", "alice@example.org-key.pem"}, "alice@example.org"},
		{"scraper", "", []string{"scraper.pem", "scraper-key.pem"}, "hdc-scraper"},
	}
	dir := hopDir(t)
	for _, tt := range tests {
		t.Run(tt.role+" "+tt.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"tls", "issue", "--role", tt.role, "--dir", dir}
			if tt.name != "" {
				args = append(args, "--name", tt.name)
			}
			res := clitest.Run(t, nil, args...)
			if res.Err != nil {
				t.Fatalf("%v: %v: %s", args, res.Err, res.Stderr)
			}
			if got := decode[hopFiles](t, string(res.Stdout)); !slices.Equal(got.Files, tt.files) {
				t.Fatalf("printed %s; want the files %q", res.Stdout, tt.files)
			}
			for _, f := range tt.files {
				if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("%s: %v %v", f, err, fi)
				}
			}
			cert := leafCert(t, dir, tt.files[0])
			if cert.Subject.CommonName != tt.cn {
				t.Errorf("the subject's CN is %q, want %q", cert.Subject.CommonName, tt.cn)
			}
			for _, r := range contract.Roles {
				if contract.NamesRole(cert, r) != (string(r) == tt.role) {
					t.Errorf("NamesRole(%s) = %v for a certificate of role %s", r, !(string(r) == tt.role), tt.role)
				}
			}
			if tt.role == "backend" && !slices.Equal(cert.DNSNames, []string{contract.BackendServerName}) {
				t.Errorf("a backend's certificate names %q, want %s", cert.DNSNames, contract.BackendServerName)
			}
		})
	}
}

// TestTLSIssueRefuses: hdc tls issue replaces no file unless --force, the
// role's own files included, and refuses a name that is not a safe file
// name; a refusal writes nothing.
func TestTLSIssueRefuses(t *testing.T) {
	t.Parallel()
	dir := hopDir(t)
	issue := func(args ...string) clitest.Result {
		return clitest.Run(t, nil, append([]string{"tls", "issue", "--dir", dir}, args...)...)
	}
	if res := issue("--role", "edge", "--name", "edge-1"); res.Err != nil {
		t.Fatalf("issue: %v: %s", res.Err, res.Stderr)
	}
	tests := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"a name's files again", []string{"--role", "edge", "--name", "edge-1"}, "--force"},
		{"the role's own files", []string{"--role", "edge"}, "--force"},
		{"the backend's own files", []string{"--role", "backend"}, "--force"},
		{"a name of another role's files", []string{"--role", "publisher", "--name", "edge-1"}, "--force"},
		{"an empty name", []string{"--role", "edge", "--name", ""}, "name"},
		{"a path", []string{"--role", "edge", "--name", "../edge-1"}, "name"},
		{"a directory", []string{"--role", "edge", "--name", "sub/edge-1"}, "name"},
		{"a backslash", []string{"--role", "edge", "--name", `sub\edge-1`}, "name"},
		{"dot dot", []string{"--role", "edge", "--name", ".."}, "name"},
		{"a hidden file", []string{"--role", "edge", "--name", ".edge"}, "name"},
		{"a flag", []string{"--role", "edge", "--name=-rf"}, "name"},
		{"a control character", []string{"--role", "edge", "--name", "edge\n1"}, "name"},
		{"a space", []string{"--role", "edge", "--name", "edge 1"}, "name"},
		{"the authority's certificate", []string{"--role", "edge", "--name", "ca", "--force"}, "name"},
		{"the authority's key", []string{"--role", "edge", "--name", "ca-key", "--force"}, "name"},
		{"another's key", []string{"--role", "edge", "--name", "edge-key", "--force"}, "name"},
		{"a name longer than a subject holds", []string{"--role", "edge", "--name", strings.Repeat("e", 65)}, "name"},
		{"a letter beyond ASCII", []string{"--role", "edge", "--name", "édge"}, "name"},
	}
	// The cases run one after the other: each checks that the directory
	// they share is as it was.
	before := dirContents(t, dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := issue(tt.args...)
			if res.Err == nil || !bytes.Contains(res.Stderr, []byte(tt.want)) || len(res.Stdout) != 0 {
				t.Errorf("%v: %v, stderr %q; want a refusal naming %q", tt.args, res.Err, res.Stderr, tt.want)
			}
			if after := dirContents(t, dir); !maps.EqualFunc(before, after, bytes.Equal) {
				t.Fatal("the refusal changed the directory")
			}
		})
	}
	for _, args := range [][]string{{"--role", "edge", "--name", "edge-1", "--force"}, {"--role", "edge", "--force"}} {
		if res := issue(args...); res.Err != nil {
			t.Fatalf("%v: %v: %s", args, res.Err, res.Stderr)
		}
	}
	after := dirContents(t, dir)
	for _, f := range []string{"edge-1.pem", "edge-1-key.pem", "edge.pem", "edge-key.pem"} {
		if bytes.Equal(before[f], after[f]) {
			t.Errorf("--force left %s as it was", f)
		}
	}
	for _, f := range []string{"ca.pem", "ca-key.pem", "backend.pem", "backend-key.pem"} {
		if !bytes.Equal(before[f], after[f]) {
			t.Errorf("%s changed", f)
		}
	}
}

// dirContents returns each file of dir by name.
func dirContents(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if files[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return files
}
