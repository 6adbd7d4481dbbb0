package web

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

type edgeKey struct{}

// CheckEdgeSecret refuses (403, untrusted_source) a request whose
// X-HDC-Edge-Secret header is not secret. It compares SHA-256 digests in
// constant time, so neither the content nor the length of the secret
// shows in the timing. It returns the request to serve, without that
// header, and marked as coming from the edge for SourceAddr. With an empty
// secret (allowed only on a loopback listener) it only removes the header.
func CheckEdgeSecret(secret string, r *http.Request) (*http.Request, *problem.Problem) {
	got := r.Header.Values(contract.HeaderEdgeSecret)
	r.Header.Del(contract.HeaderEdgeSecret)
	if secret == "" {
		return r, nil
	}
	if len(got) != 1 || !contract.SameSecret(got[0], secret) {
		return r, problem.New(http.StatusForbidden, problem.CodeUntrustedSource,
			"requests must come through the Health Data Connect edge")
	}
	return r.WithContext(context.WithValue(r.Context(), edgeKey{}, true)), nil
}

// SourceAddr returns the address of the client that made r, for throttling
// and logs. The backend listens behind the edge, which appends the address
// it saw to X-Forwarded-For; the last hop is believed only when the request
// came from the edge for certain (it carried the edge secret) or from
// loopback (where the edge runs by default, and where anyone able to connect
// could equally run the edge). Otherwise the connection's peer is the source.
// An IPv6 source is reduced to its /64, which one host usually controls
// whole.
func SourceAddr(r *http.Request) string {
	peer := peerAddr(r)
	verified, _ := r.Context().Value(edgeKey{}).(bool)
	if verified || peer.IsLoopback() {
		if hop, ok := lastForwarded(r.Header); ok {
			peer = hop
		}
	}
	if !peer.IsValid() {
		return "unknown"
	}
	if peer.Is6() {
		p, _ := peer.WithZone("").Prefix(64)
		return p.String()
	}
	return peer.String()
}

func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// lastForwarded returns the last address of the last X-Forwarded-For line.
func lastForwarded(h http.Header) (netip.Addr, bool) {
	lines := h.Values("X-Forwarded-For")
	if len(lines) == 0 {
		return netip.Addr{}, false
	}
	line := lines[len(lines)-1]
	if i := strings.LastIndexByte(line, ','); i >= 0 {
		line = line[i+1:]
	}
	a, err := netip.ParseAddr(strings.TrimSpace(line))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}
