package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// A Destination is addresses a webhook may or may not reach: an address
// prefix, and a port or every port. Operators grant workspaces their
// private receivers as destinations, and name the gateway's own listeners
// as destinations no webhook reaches.
type Destination struct {
	// Prefix is masked and never IPv4-mapped; an address is a /32 or a
	// /128.
	Prefix netip.Prefix
	// Port is 0 for every port.
	Port uint16
}

// Contains reports whether ap, an address and port dialled, is one of d's.
func (d Destination) Contains(ap netip.AddrPort) bool {
	return d.Prefix.Contains(ap.Addr().Unmap()) && (d.Port == 0 || d.Port == ap.Port())
}

// String is d as ParseDestination reads it: the prefix (an address
// without its length), with ":port" when it has one ("[…]:port" for
// IPv6).
func (d Destination) String() string {
	host := d.Prefix.String()
	if d.Prefix.IsSingleIP() {
		host = d.Prefix.Addr().String()
	}
	if d.Port == 0 {
		return host
	}
	if d.Prefix.Addr().Is6() {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(int(d.Port))
}

// metadataAddrs are the clouds' instance metadata services, which a
// destination may not hold: they are never a receiver.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, Google Cloud, Azure, …
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	netip.MustParseAddr("168.63.129.16"),   // Azure's wire server
}

// NewDestination checks an address or prefix and a port (0 for every
// port) and returns the Destination they name, the prefix masked and
// unmapped. A prefix holding a cloud's metadata service is refused. Its
// errors are safe to show.
func NewDestination(prefix string, port int) (Destination, error) {
	p, err := parsePrefix(prefix)
	switch {
	case err != nil:
		return Destination{}, err
	case port < 0 || port > 65535:
		return Destination{}, errors.New("port must be 1 to 65535, or 0 for every port")
	}
	for _, m := range metadataAddrs {
		if p.Contains(m) {
			return Destination{}, fmt.Errorf("%s holds %s, a cloud's instance metadata service, which is never a receiver", p, m)
		}
	}
	return Destination{Prefix: p, Port: uint16(port)}, nil
}

// parsePrefix reads an address (a single address's prefix) or a prefix,
// IPv4-mapped ones as their IPv4 form, and masks it.
func parsePrefix(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or prefix (10.0.0.31, 10.1.2.0/24, fd00::/64)", s)
	}
	if a := p.Addr(); a.Is4In6() {
		bits := p.Bits() - 96
		if bits < 0 {
			return netip.Prefix{}, fmt.Errorf("%q is an IPv4-mapped prefix shorter than ::ffff:0:0/96", s)
		}
		p = netip.PrefixFrom(a.Unmap(), bits)
	}
	return p.Masked(), nil
}

// ParseDestination reads a destination as String writes it, as an
// operator writes one in a setting: an address or a prefix with a port
// (10.0.0.21:9180, [fd00::21]:9180, 10.0.0.0/24:9180), or without one, for
// every port.
func ParseDestination(s string) (Destination, error) {
	s = strings.TrimSpace(s)
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return NewDestination(s, 0)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return Destination{}, fmt.Errorf("%q: the port must be 1 to 65535; leave it out for every port", s)
	}
	return NewDestination(host, int(n))
}

// ListenerDestinations returns the destinations of a listener at address
// (host:port), which no webhook may reach: the address and port; for a
// listener on every address (":9180", "0.0.0.0:9180", "[::]:9180"), the
// port of each address of this host's interfaces; for a name, the port of
// each address it resolves to.
func ListenerDestinations(ctx context.Context, res Resolver, address string) ([]Destination, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("%q has no port", address)
	}
	var addrs []netip.Addr
	switch a, err := netip.ParseAddr(host); {
	case host == "" || err == nil && a.IsUnspecified():
		addrs, err = interfaceAddrs()
		if err != nil {
			return nil, err
		}
	case err == nil:
		addrs = []netip.Addr{a}
	default:
		if addrs, err = res.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, err
		}
	}
	out := make([]Destination, 0, len(addrs))
	for _, a := range addrs {
		a = a.Unmap().WithZone("")
		out = append(out, Destination{Prefix: netip.PrefixFrom(a, a.BitLen()), Port: uint16(port)})
	}
	return out, nil
}

// interfaceAddrs returns the addresses of this host's interfaces.
func interfaceAddrs() ([]netip.Addr, error) {
	nets, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, n := range nets {
		if p, err := netip.ParsePrefix(n.String()); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out, nil
}
