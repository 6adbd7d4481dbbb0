package hdctest

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/health-data-connect/hdc/internal/pki"
)

// AdminURL is the base of the edge's admin API as AdminClient reaches it:
// the host is not looked at, since a unix socket has none.
const AdminURL = "http://localhost"

// AdminAddress is the reference Caddyfile's HDC_EDGE_ADMIN for a unix
// socket at path that only its owner may open, as every deployment shape
// sets it.
func AdminAddress(path string) string { return "unix/" + path + "|0600" }

// AdminClient returns a client of the edge's admin API, on its unix
// socket.
func (s *Stack) AdminClient() *http.Client { return UnixClient(s.AdminSocket) }

// UnixClient returns a client whose every connection goes to the unix
// socket at path.
func UnixClient(path string) *http.Client {
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: dial}}
}

// Person issues a certificate of role (operator or auditor) for name in
// the stack's hop directory and returns a stack whose hdc runs as that
// person against the stack's Admin API, with no database, keeper or data
// directory, as on an operator's laptop; its HTTP client presents the
// certificate to the backend's internal listener.
func (s *Stack) Person(role pki.Role, name string) *Stack {
	s.T.Helper()
	s.HDC(nil, "tls", "issue", "--role", string(role), "--name", name, "--dir", s.Hop)
	cert, key, ca := filepath.Join(s.Hop, name+".pem"), filepath.Join(s.Hop, name+"-key.pem"), filepath.Join(s.Hop, pki.CAFile)
	s.Creds.NotePEMFile(s.T, "a private key of the hop", key)
	cfg, err := pki.ClientTLS(cert, key, ca)
	if err != nil {
		s.T.Fatal(err)
	}
	return &Stack{T: s.T, Dir: s.Dir, Hop: s.Hop, Internal: s.Internal, Edge: s.Edge,
		HTTP: &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: cfg}},
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.Dir, "HDC_ADMIN_URL=" + s.Internal,
			"HDC_ADMIN_CERT=" + cert, "HDC_ADMIN_KEY=" + key, "HDC_ADMIN_CA=" + ca}}
}
