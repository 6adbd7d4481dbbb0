package hdctest

import (
	"context"
	"net"
	"net/http"
	"time"
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
