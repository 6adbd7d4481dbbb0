package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"code.dny.dev/ssrf"
)

// ErrDestinationRefused is the error of a dial the Guard refuses: an
// address the SSRF rules refuse that no allowance or grant of the
// workspace admits, or a listener of the gateway.
var ErrDestinationRefused = errors.New("webhook: the destination is refused")

// GuardConfig configures a Guard.
type GuardConfig struct {
	// Allow are address prefixes every workspace's webhooks may reach
	// although the SSRF rules refuse them: hdc up's loopback, for a
	// receiver on the same machine. A deployment grants each workspace its
	// own private receivers instead (Grants).
	Allow []netip.Prefix
	// Refused are the gateway's own listeners (the edges' sites and
	// metrics, the backends' listeners), which no webhook reaches,
	// whatever Allow or a grant says.
	Refused []Destination
	// Grants are the destinations operators granted workspaces, nil for
	// none.
	Grants *Grants
}

// Guard decides which addresses a workspace's webhooks may reach: a public
// address, unless it is a listener of the gateway; an address of Allow;
// and an address of one of the workspace's grants. Registration screens an
// endpoint with it and every delivery checks each address it dials, after
// DNS (Policy.Control), so that a name rebinding to an internal address is
// refused at the dial. Whether an address is public is the SSRF rules' say
// (code.dny.dev/ssrf: no loopback, private, link-local, CGNAT, multicast,
// documentation or other special-purpose range of IANA's registries).
type Guard struct {
	public  *ssrf.Guardian
	allow   []netip.Prefix
	grants  *Grants
	mu      sync.Mutex
	refused atomic.Pointer[[]Destination]
}

// NewGuard returns the Guard cfg describes.
func NewGuard(cfg GuardConfig) *Guard {
	g := &Guard{public: ssrf.New(ssrf.WithAnyPort()), allow: slices.Clone(cfg.Allow), grants: cfg.Grants}
	refused := slices.Clone(cfg.Refused)
	g.refused.Store(&refused)
	return g
}

// Refuse adds ds to the gateway's own listeners: the backend adds its own
// once it listens.
func (g *Guard) Refuse(ds ...Destination) {
	g.mu.Lock()
	defer g.mu.Unlock()
	next := slices.Concat(*g.refused.Load(), ds)
	g.refused.Store(&next)
}

// Public reports whether a is an address the SSRF rules let every webhook
// reach: an answer from it may be kept for its client (the delivery log);
// an answer from another, which only an allowance or a grant admits, may
// not.
func (g *Guard) Public(a netip.Addr) bool { return g.public.SafeAddr(a.Unmap()) == nil }

// A Policy is what one workspace's webhooks may reach: a Guard with the
// workspace's grants and the gateway's listeners as they were read.
type Policy struct {
	g       *Guard
	grants  []Destination
	refused []Destination
}

// Policy returns the policy of workspace from the copy of the grants
// (Grants.For); "" is the policy of no workspace, without grants. It
// fails when the grants cannot be read: a delivery is not made without
// them.
func (g *Guard) Policy(ctx context.Context, workspace string) (Policy, error) {
	return g.policy(ctx, workspace, false)
}

// FreshPolicy is Policy with the workspace's grants read from the store:
// a registration sees a grant made a moment before.
func (g *Guard) FreshPolicy(ctx context.Context, workspace string) (Policy, error) {
	return g.policy(ctx, workspace, true)
}

func (g *Guard) policy(ctx context.Context, workspace string, fresh bool) (Policy, error) {
	p := Policy{g: g, refused: *g.refused.Load()}
	if g.grants == nil {
		return p, nil
	}
	snap, err := g.grants.snapshot(ctx)
	if err != nil {
		return Policy{}, err
	}
	p.refused = slices.Concat(p.refused, snap.backends)
	switch {
	case workspace == "":
	case fresh:
		p.grants, err = g.grants.read(ctx, workspace)
	default:
		p.grants = snap.byWorkspace[workspace]
	}
	return p, err
}

// Granted reports whether the policy holds grants: a delivery under it
// dials on connections of its own.
func (p Policy) Granted() bool { return len(p.grants) > 0 }

// Admit returns nil when a webhook under p may reach ap, and otherwise an
// error wrapping ErrDestinationRefused.
func (p Policy) Admit(ap netip.AddrPort) error {
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	for _, d := range p.refused {
		if d.Contains(ap) {
			return fmt.Errorf("%w: %s is a listener of the gateway", ErrDestinationRefused, ap)
		}
	}
	a := ap.Addr()
	if p.g.Public(a) || slices.ContainsFunc(p.g.allow, func(q netip.Prefix) bool { return q.Contains(a) }) {
		return nil
	}
	if slices.ContainsFunc(p.grants, func(d Destination) bool { return d.Contains(ap) }) {
		return nil
	}
	return fmt.Errorf("%w: %s is a %s address", ErrDestinationRefused, a, ruleOf(a))
}

// gateway reports whether ap is one of the gateway's listeners.
func (p Policy) gateway(ap netip.AddrPort) bool {
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	return slices.ContainsFunc(p.refused, func(d Destination) bool { return d.Contains(ap) })
}

// Control is a net.Dialer's Control: it admits the address about to be
// dialled, after DNS, or refuses it.
func (p Policy) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an address and port", ErrDestinationRefused, address)
	}
	return p.Admit(ap)
}
