package web

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strconv"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

type edgeKey struct{}

// CheckEdge refuses (403, untrusted_source) a request that did not come
// from the edge, and returns the request to serve, marked as the edge's for
// SourceAddr. With the hop's TLS (hopTLS), the edge is a client
// certificate that names it (contract.FromEdge); the handshake has already
// refused a connection without a certificate of the hop's authority.
// Without it the listener is plain loopback HTTP, and whoever reaches it is
// taken for the edge. Either way the request must carry the hop headers
// the edge sets (hopHeadersOK), each once.
func CheckEdge(hopTLS bool, r *http.Request) (*http.Request, *problem.Problem) {
	if hopTLS && !contract.FromEdge(r.TLS) {
		return r, problem.New(http.StatusForbidden, problem.CodeUntrustedSource,
			"requests must come through the Health Data Connect edge")
	}
	if !hopHeadersOK(r.Header) {
		return r, problem.New(http.StatusForbidden, problem.CodeUntrustedSource,
			"the request lacks a header the edge sets on every request, or repeats one")
	}
	return r.WithContext(context.WithValue(r.Context(), edgeKey{}, true)), nil
}

// RequireRole serves next only to a request whose client certificate, of
// the hop's authority, names role (contract.HasRole), and refuses any
// other with 403 forbidden, logging the refusal. With the hop's TLS
// (hopTLS) the handshake has already refused a certificate of another
// authority, and a client may come without one (the health routes need
// none). Without it the listener is plain loopback HTTP, and whoever
// reaches it is served.
func RequireRole(hopTLS bool, role contract.Role, log *zap.Logger, next http.Handler) http.Handler {
	if !hopTLS {
		return next
	}
	refusal := problem.New(http.StatusForbidden, problem.CodeForbidden,
		"this route needs a client certificate of the hop's authority with the role "+string(role))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !contract.HasRole(r.TLS, role) {
			telemetry.Logger(r.Context(), log).Warn("request refused: no client certificate of the role the route needs",
				zap.String("method", contract.Method(r.Method)), zap.String("role", string(role)),
				zap.Bool("certificate", r.TLS != nil && len(r.TLS.PeerCertificates) > 0), zap.String("source", SourceAddr(r)))
			problem.Write(w, refusal)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hopHeadersOK reports whether h carries the hop headers the edge sets on
// every request exactly once, each of its syntax (the client's address,
// the request's id), and the key headers of an encrypted request both once
// or neither. Whatever removed or repeated one (a proxy that honoured a
// client's Connection field, say) would make the backend throttle, audit
// and bind keys on the wrong facts; the identity headers of a bearer
// token are RequireCaller's.
func hopHeadersOK(h http.Header) bool {
	ip, okIP := single(h, contract.HeaderClientIP)
	id, okID := single(h, contract.HeaderRequestID)
	if !okIP || !okID || !contract.IsUUID(id) {
		return false
	}
	if _, err := netip.ParseAddr(ip); err != nil {
		return false
	}
	kid, kidOK := single(h, contract.HeaderKeyID)
	owner, ownerOK := single(h, contract.HeaderKeyClientID)
	switch {
	case kidOK && ownerOK:
		return clientkey.ValidKid(kid) && contract.IsUUID(owner) && jtiHeadersOK(h)
	case len(h.Values(contract.HeaderKeyID)) == 0 && len(h.Values(contract.HeaderKeyClientID)) == 0:
		return len(h.Values(contract.HeaderJTI)) == 0 && len(h.Values(contract.HeaderJTIExpires)) == 0
	}
	return false
}

// jtiHeadersOK reports whether the jti of an encrypted request and its
// expiry come both, each once and of its syntax, or neither.
func jtiHeadersOK(h http.Header) bool {
	jti, jtiOK := single(h, contract.HeaderJTI)
	expires, expiresOK := single(h, contract.HeaderJTIExpires)
	switch {
	case jtiOK && expiresOK:
		n, err := strconv.ParseInt(expires, 10, 64)
		return contract.ValidJTI(jti) && err == nil && n > 0
	case len(h.Values(contract.HeaderJTI)) == 0 && len(h.Values(contract.HeaderJTIExpires)) == 0:
		return true
	}
	return false
}

// SourceAddr returns the address of the client that made r, for throttling
// and logs: the address the edge saw (contract.HeaderClientIP, which the
// edge computes with its trusted proxies) when the request came from the
// edge, the connection's peer otherwise. An IPv6 source is reduced to its
// /64, which one host usually controls whole.
func SourceAddr(r *http.Request) string {
	peer := peerAddr(r)
	if fromEdge, _ := r.Context().Value(edgeKey{}).(bool); fromEdge {
		if v := r.Header.Values(contract.HeaderClientIP); len(v) == 1 {
			if a, err := netip.ParseAddr(v[0]); err == nil {
				peer = a.Unmap()
			}
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
