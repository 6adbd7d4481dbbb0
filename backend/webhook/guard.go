package webhook

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"

	"code.dny.dev/ssrf"
)

// ErrEndpointNotAllowed is returned by Rules.Parse for an HTTP(S) endpoint
// that deliveries may not reach.
var ErrEndpointNotAllowed = errors.New("the endpoint's host is a loopback, private, link-local or other special-purpose address, which webhooks may not reach")

// NewGuard returns the SSRF guard of HTTP(S) webhooks: it refuses loopback,
// private, link-local (cloud metadata), CGNAT, multicast, documentation
// and the other special-purpose ranges of IANA's registries, IPv4-mapped
// IPv6 included, on any port, except the prefixes in allow. Deliveries
// check every address they dial with it; registration checks literal
// addresses with it too.
func NewGuard(allow []netip.Prefix) *ssrf.Guardian {
	var v4, v6 []netip.Prefix
	for _, p := range allow {
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	return ssrf.New(ssrf.WithAnyPort(), ssrf.WithAllowedV4Prefixes(v4...), ssrf.WithAllowedV6Prefixes(v6...))
}

// loopback are the addresses a localhost name stands for (RFC 6761).
var loopback = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}

// screen returns ErrEndpointNotAllowed when u's host alone shows that a
// delivery would be refused: a literal address the guard refuses, or
// localhost or a name under .localhost unless the guard allows loopback.
// It is a courtesy to the client, not the defence: a name may resolve, or
// come to resolve, to any address, and only the dial-time check of the
// delivery sees it.
func screen(g *ssrf.Guardian, u *url.URL) error {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	addrs := loopback
	if a, err := netip.ParseAddr(host); err == nil {
		// Go dials an IPv4-mapped address over IPv4, as the guard sees it.
		addrs = []netip.Addr{a.Unmap()}
	} else if host != "localhost" && !strings.HasSuffix(host, ".localhost") {
		return nil
	}
	for _, a := range addrs {
		if g.SafeAddr(a) != nil {
			return ErrEndpointNotAllowed
		}
	}
	return nil
}
