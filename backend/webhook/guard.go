package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/idna"
)

// ErrEndpointNotAllowed is returned by Rules.Parse for an HTTP(S) endpoint
// that deliveries may not reach; the error is an *EndpointError, which
// names the rule.
var ErrEndpointNotAllowed = errors.New("the endpoint's host is one webhooks may not reach")

// An EndpointError says why an endpoint's host is refused: what it stands
// for, and the rule that refuses it.
type EndpointError struct {
	Host    string // as the endpoint wrote it
	Meaning string // what it stands for: "the address …", "a name of …"
	Rule    string // loopback, private, link-local, special-purpose, metadata, gateway
}

func (e *EndpointError) Error() string {
	if e.Rule == ruleGateway {
		return fmt.Sprintf("the endpoint's host %q is %s: webhooks may not reach the gateway's own listeners", e.Host, e.Meaning)
	}
	return fmt.Sprintf("the endpoint's host %q is %s: webhooks may not reach %s hosts", e.Host, e.Meaning, e.Rule)
}

// ruleGateway is the Rule of a listener of the gateway.
const ruleGateway = "gateway"

// Is makes an *EndpointError match ErrEndpointNotAllowed.
func (e *EndpointError) Is(target error) bool { return target == ErrEndpointNotAllowed }

// A Resolver looks up the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolveTimeout bounds the look-up of an endpoint's host name, which a
// registration waits for.
const resolveTimeout = 2 * time.Second

// loopback are the addresses a loopback name stands for (RFC 6761).
var loopback = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}

// loopbackNames are the names resolvers answer with loopback from their
// hosts files, besides localhost and the names under .localhost.
var loopbackNames = map[string]bool{"localhost.localdomain": true, "ip6-localhost": true, "ip6-loopback": true}

// metadataNames are the names clouds give their instance metadata
// services, refused whatever the guard allows.
var metadataNames = map[string]bool{
	"metadata": true, "metadata.google.internal": true, // Google Cloud
	"instance-data": true, "instance-data.ec2.internal": true, // AWS
	"metadata.azure.internal": true, // Azure (its wire server is 168.63.129.16)
}

// hostProfile reads a host as a resolver is asked it: UTS #46 mapping
// (fullwidth digits and ideographic full stops become ASCII, "①" becomes
// "1", letters fold case), then Punycode; underscores and the like, which
// some names carry, are let through.
var hostProfile = idna.New(idna.MapForLookup(), idna.StrictDomainName(false))

// screen returns an *EndpointError when a delivery to u under p would be
// refused: when the host is an address p refuses on the endpoint's port,
// however it is written (the forms inet_aton reads, IDNA and fullwidth
// characters, a trailing dot), a loopback name that p refuses, or a cloud
// metadata name; or when it is another name that resolves, now, only to
// addresses p refuses (screenName). It is a courtesy to the client, not
// the defence: a name may come to resolve to any address, and only the
// dial-time check of the delivery sees it.
func screen(ctx context.Context, res Resolver, p Policy, u *url.URL) error {
	written := u.Hostname()
	ascii, err := hostProfile.ToASCII(written)
	if err != nil {
		return fmt.Errorf("the endpoint's host %q is not a valid host name: %v", written, err)
	}
	host := strings.TrimRight(strings.ToLower(ascii), ".")
	port := endpointPort(u)
	var addrs []netip.Addr
	meaning := "a name of"
	switch {
	case metadataNames[host]:
		return &EndpointError{Host: written, Meaning: "the name of a cloud's instance metadata service", Rule: "metadata"}
	case host == "localhost" || strings.HasSuffix(host, ".localhost") || loopbackNames[host]:
		addrs = loopback
	default:
		a, ok := parseIP(host)
		if !ok {
			// Looked up as deliveries look it up: the trailing dot kept.
			return screenName(ctx, res, p, written, ascii, port)
		}
		// Go dials an IPv4-mapped address over IPv4, as the guard sees it.
		addrs, meaning = []netip.Addr{a.Unmap()}, "the address "+a.Unmap().String()
	}
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, port)
		if p.Admit(ap) != nil {
			if meaning == "a name of" {
				meaning += " " + a.String()
			}
			return &EndpointError{Host: written, Meaning: meaning, Rule: p.ruleOf(ap)}
		}
	}
	return nil
}

// endpointPort is the port a delivery to u dials.
func endpointPort(u *url.URL) uint16 {
	if n, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return uint16(n)
	}
	if u.Scheme == "http" {
		return 80
	}
	return 443
}

// screenName returns an *EndpointError when host, a name, resolves only to
// addresses p refuses on port, which deliveries could then reach none of.
// A name with an address p admits passes (deliveries dial that one), and
// so does a name that does not resolve within resolveTimeout, for want of
// records, of an answer or of a working resolver: the answer may differ by
// the time of a delivery, and is no error of the client's
// (docs/webhooks.md). The error names the rules and not the addresses,
// which are the backend's view of DNS.
func screenName(ctx context.Context, res Resolver, p Policy, written, host string, port uint16) error {
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil
	}
	var rules []string
	for _, a := range addrs {
		// A resolver gives an IPv4 address in its IPv4-mapped form, which
		// Go dials over IPv4, as the guard sees it.
		ap := netip.AddrPortFrom(a.Unmap(), port)
		if p.Admit(ap) == nil {
			return nil
		}
		if r := p.ruleOf(ap); !slices.Contains(rules, r) {
			rules = append(rules, r)
		}
	}
	rule := strings.Join(rules, " or ")
	return &EndpointError{Host: written, Meaning: "a name that resolves only to " + rule + " addresses", Rule: rule}
}

// ruleOf names the rule that refuses ap under p: the gateway's listeners,
// or the kind of special address it is.
func (p Policy) ruleOf(ap netip.AddrPort) string {
	if p.gateway(ap) {
		return ruleGateway
	}
	return ruleOf(ap.Addr())
}

// ruleOf names the kind of special address a is.
func ruleOf(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local (cloud metadata)"
	}
	return "special-purpose"
}

// parseIP reads host as an address: an IPv6 or dotted-decimal IPv4 one,
// or one of the IPv4 forms of inet_aton (RFC 6943 §3.1.1), which the C
// library's resolvers take and netip refuses by design: one to four
// parts, each decimal, octal (a leading 0) or hexadecimal (0x), the last
// filling the bytes the others left ("127.1" is 127.0.0.1, "2130706433"
// too). No library of Go reads them, hence this.
func parseIP(host string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := inetAtonPart(p)
		last := i == len(parts)-1
		width := uint(8)
		if last {
			width = uint(8 * (4 - i))
		}
		if !ok || n >= 1<<width {
			return netip.Addr{}, false
		}
		if last {
			v = v<<width | n
		} else {
			v = v<<8 | n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// inetAtonPart reads one part of an inet_aton address: 0x or 0X and hex
// digits, 0 and octal digits, or decimal digits.
func inetAtonPart(p string) (uint64, bool) {
	base, digits := 10, p
	switch {
	case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
		base, digits = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, digits = 8, p[1:]
	}
	if digits == "" && base != 16 || len(digits) > 12 {
		return 0, false
	}
	var n uint64
	for _, c := range digits {
		d := uint64(36)
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		}
		if d >= uint64(base) {
			return 0, false
		}
		n = n*uint64(base) + d
	}
	return n, true
}
