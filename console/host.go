package console

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// hostSet is the names a console answers for: localhost and the loopback
// addresses, the host of its listen address, and any address when it
// listens on every interface. A page of a foreign name that an attacker
// points at the console's address (DNS rebinding) sends that name as its
// Host: the console refuses it. An address cannot be rebound, so admitting
// every address on every interface opens nothing to a foreign page.
type hostSet struct {
	names   map[string]bool
	addr    netip.Addr // the listen address, if one
	anyAddr bool       // listening on every interface
}

// hostsOf returns the names a console listening on listen (host:port, as
// --listen) answers for.
func hostsOf(listen string) hostSet {
	h := hostSet{names: map[string]bool{"localhost": true}}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return h
	}
	host = canonicalHost(host)
	if ip, err := netip.ParseAddr(host); err == nil {
		h.anyAddr = ip.IsUnspecified()
		h.addr = ip.Unmap()
	} else if host == "" {
		h.anyAddr = true
	} else {
		h.names[host] = true
	}
	return h
}

// boundTo returns h admitting too the address the listener is bound to,
// the one the login URL names (--listen may name a host).
func (h hostSet) boundTo(a net.Addr) hostSet {
	if tcp, ok := a.(*net.TCPAddr); ok && !h.anyAddr {
		h.addr = tcp.AddrPort().Addr().Unmap()
	}
	return h
}

// admit reports whether a request's Host (host or host:port) names the
// console.
func (h hostSet) admit(hostport string) bool {
	host := hostport
	if hp, _, err := net.SplitHostPort(hostport); err == nil {
		host = hp
	}
	host = canonicalHost(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "" {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return h.names[host]
	}
	ip = ip.Unmap()
	return h.anyAddr || ip.IsLoopback() || ip == h.addr
}

// canonicalHost is a host name as a Host header compares: lower case,
// without the root's dot.
func canonicalHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// checkHost refuses 421 Misdirected Request (RFC 9110, 15.5.20) a request
// whose Host is not one the console answers for: the request was sent to
// this listener under a name that is not its own.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts.admit(r.Host) {
			s.pages.problem(w, http.StatusMisdirectedRequest,
				"This console answers only for the names it listens on: 127.0.0.1, localhost, [::1] and the host of its --listen.")
			return
		}
		next.ServeHTTP(w, r)
	})
}
