package webhook

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

func TestNewDestination(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prefix  string
		port    int
		want    string // String(), "" when refused
		wantErr string
	}{
		{"10.0.0.31", 9999, "10.0.0.31:9999", ""},
		{"10.0.0.31", 0, "10.0.0.31", ""},
		{"10.1.2.3/24", 443, "10.1.2.0/24:443", ""}, // masked
		{"fd00::31", 8443, "[fd00::31]:8443", ""},
		{"fd00:1::/64", 0, "fd00:1::/64", ""},
		{"::ffff:10.0.0.31", 80, "10.0.0.31:80", ""},       // unmapped
		{"::ffff:10.0.0.0/120", 0, "10.0.0.0/24", ""},      // unmapped
		{"127.0.0.1", 9999, "127.0.0.1:9999", ""},          // a receiver beside the backend
		{"169.254.0.0/16", 0, "", "instance metadata"},     // never a receiver
		{"0.0.0.0/0", 0, "", "instance metadata"},          // every address holds them
		{"fd00::/8", 0, "", "instance metadata"},           // AWS's over IPv6
		{"receivers.internal", 0, "", "not an IP address"}, // names resolve elsewhere
		{"10.0.0.31%eth0", 0, "", "not an IP address"},
		{"10.0.0.31", 65536, "", "port must be"},
		{"10.0.0.31", -1, "", "port must be"},
		{"::ffff:0:0/90", 0, "", "IPv4-mapped"},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			d, err := NewDestination(tt.prefix, tt.port)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("NewDestination(%q, %d) = %v, %v; want an error with %q", tt.prefix, tt.port, d, err, tt.wantErr)
			case tt.wantErr == "" && (err != nil || d.String() != tt.want):
				t.Fatalf("NewDestination(%q, %d) = %v, %v; want %s", tt.prefix, tt.port, d, err, tt.want)
			}
			if err == nil {
				again, err := ParseDestination(d.String())
				if err != nil || again != d {
					t.Fatalf("ParseDestination(%q) = %v, %v; want %v", d.String(), again, err, d)
				}
			}
		})
	}
	if _, err := ParseDestination("10.0.0.31:0"); err == nil {
		t.Fatal("port 0 written out was taken")
	}
}

func FuzzParseDestination(f *testing.F) {
	for _, s := range []string{"10.0.0.31:9999", "[fd00::1]:443", "10.1.2.0/24", "::ffff:10.0.0.0/120", "1.2.3.4:0", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDestination(s)
		if err != nil {
			return
		}
		if d.Prefix != d.Prefix.Masked() || d.Prefix.Addr().Is4In6() || d.Prefix.Addr().Zone() != "" {
			t.Fatalf("ParseDestination(%q) = %v, not masked and unmapped", s, d)
		}
		if again, err := ParseDestination(d.String()); err != nil || again != d {
			t.Fatalf("%q → %v → %q → %v, %v", s, d, d.String(), again, err)
		}
	})
}

// grantTable is a GrantStore a test changes, and which fails when told.
type grantTable struct {
	mu       sync.Mutex
	grants   []store.WebhookDestination
	backends []store.FleetBackend
	fail     error
	reads    int
}

func (g *grantTable) ListDestinations(_ context.Context, f store.DestinationFilter) ([]store.WebhookDestination, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reads++
	if g.fail != nil {
		return nil, g.fail
	}
	var out []store.WebhookDestination
	for _, d := range g.grants {
		if f.WorkspaceID == "" || d.WorkspaceID == f.WorkspaceID {
			out = append(out, d)
		}
	}
	return out, nil
}

func (g *grantTable) ListBackends(context.Context) ([]store.FleetBackend, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.backends, g.fail
}

func (g *grantTable) change(fn func(*grantTable)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fn(g)
}

func grant(ws, prefix string, port uint16) store.WebhookDestination {
	return store.WebhookDestination{WorkspaceID: ws, Prefix: netip.MustParsePrefix(prefix), Port: port}
}

// TestPolicyAdmit: a workspace's policy admits public addresses, the
// allow-list and its own grants (their ports), and refuses the gateway's
// listeners whatever admits them, and any other special address.
func TestPolicyAdmit(t *testing.T) {
	t.Parallel()
	table := &grantTable{grants: []store.WebhookDestination{grant("w1", "10.0.0.31/32", 9999), grant("w1", "10.1.2.0/24", 0),
		grant("w2", "10.0.0.31/32", 0), grant("w1", "10.0.0.40/32", 0)},
		backends: []store.FleetBackend{{Address: "10.0.0.12:9081"}, {Address: "[::]:9081"}, {Address: "not an address"}}}
	g := NewGuard(GuardConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Grants: NewGrants(table, time.Hour),
		Refused: []Destination{{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: 9180}, {Prefix: netip.MustParsePrefix("10.0.0.40/32")}}})
	g.Refuse(Destination{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: 9081})
	tests := []struct {
		ws, addr string
		ok       bool
	}{
		{"w1", "93.184.215.14:443", true},
		{"", "93.184.215.14:443", true},
		{"w1", "10.0.0.31:9999", true},
		{"w1", "10.0.0.31:9998", false}, // another port of a grant
		{"w1", "[::ffff:10.0.0.31]:9999", true},
		{"w1", "10.1.2.200:1", true},
		{"w2", "10.0.0.31:80", true},
		{"w2", "10.1.2.200:1", false}, // w1's grant
		{"w3", "10.0.0.31:9999", false},
		{"", "10.0.0.31:9999", false},
		{"w3", "127.0.0.1:8080", true},  // the allow-list
		{"w3", "127.0.0.1:9180", false}, // the gateway's listener, named
		{"w3", "127.0.0.1:9081", false}, // the gateway's listener, added
		{"w1", "10.0.0.40:443", false},  // granted, but the gateway's host
		{"w1", "10.0.0.12:9081", false}, // a backend's heartbeat
		{"w1", "169.254.169.254:80", false},
		{"w1", "[fd00::31]:9999", false},
	}
	for _, tt := range tests {
		p, err := g.Policy(t.Context(), tt.ws)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Admit(netip.MustParseAddrPort(tt.addr))
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrDestinationRefused) {
			t.Errorf("%s to %s: %v, want admitted %v", tt.ws, tt.addr, err, tt.ok)
		}
	}
	if p, _ := g.Policy(t.Context(), "w3"); p.Granted() {
		t.Error("w3, which has no grant, has a granted policy")
	}
}

// TestGrantsCopy: the copy of the grants is read again once TTL old, at
// once after Forget; a store that does not answer keeps the last copy in
// use, and with no copy the policy fails: nothing is admitted on a guess.
func TestGrantsCopy(t *testing.T) {
	t.Parallel()
	table := &grantTable{fail: errors.New("the database does not answer")}
	grants := NewGrants(table, 2*time.Second)
	now := time.Unix(1_800_000_000, 0)
	grants.now = func() time.Time { return now }
	g := NewGuard(GuardConfig{Grants: grants})
	if _, err := g.Policy(t.Context(), "w1"); err == nil {
		t.Fatal("a policy without any copy of the grants")
	}
	admits := func(ws, addr string) bool {
		t.Helper()
		p, err := g.Policy(t.Context(), ws)
		if err != nil {
			t.Fatal(err)
		}
		return p.Admit(netip.MustParseAddrPort(addr)) == nil
	}
	table.change(func(g *grantTable) {
		g.fail, g.grants = nil, []store.WebhookDestination{grant("w1", "10.0.0.31/32", 0)}
	})
	if !admits("w1", "10.0.0.31:80") {
		t.Fatal("the grant is not in force")
	}
	table.change(func(g *grantTable) { g.grants = nil })
	now = now.Add(time.Second)
	if !admits("w1", "10.0.0.31:80") {
		t.Fatal("the copy was read again before its TTL")
	}
	now = now.Add(time.Second)
	if admits("w1", "10.0.0.31:80") {
		t.Fatal("a revocation is not in force after the TTL")
	}
	table.change(func(g *grantTable) { g.grants = []store.WebhookDestination{grant("w1", "10.0.0.31/32", 0)} })
	grants.Forget()
	if !admits("w1", "10.0.0.31:80") {
		t.Fatal("a grant is not in force at once after Forget")
	}
	table.change(func(g *grantTable) { g.fail = errors.New("the database does not answer") })
	now = now.Add(time.Hour)
	if !admits("w1", "10.0.0.31:80") {
		t.Fatal("the last copy is not kept while the store does not answer")
	}
	if p, err := g.FreshPolicy(t.Context(), "w1"); err == nil {
		t.Fatalf("a registration's fresh read succeeded without the store: %+v", p)
	}
}

// TestScreenGrants: registration admits a workspace's granted receiver,
// literal or by name, on its port only, refuses it to another workspace,
// and refuses a listener of the gateway, naming it, whatever is granted
// or allowed.
func TestScreenGrants(t *testing.T) {
	t.Parallel()
	table := &grantTable{grants: []store.WebhookDestination{grant("w1", "10.0.0.31/32", 9999), grant("w1", "127.0.0.1/32", 0)}}
	rules := Rules{Resolver: fakeDNS{"hooks.internal": {"10.0.0.31"}},
		Guard: NewGuard(GuardConfig{Grants: NewGrants(table, time.Hour), Refused: []Destination{{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: 9180}}})}
	tests := []struct {
		ws, endpoint, wantErr string
	}{
		{"w1", "http://10.0.0.31:9999/h", ""},
		{"w1", "http://hooks.internal:9999/h", ""},
		{"w1", "http://10.0.0.31/h", "private"},
		{"w1", "https://hooks.internal/h", "private"},
		{"w2", "http://10.0.0.31:9999/h", "private"},
		{"w1", "http://127.0.0.1:8080/h", ""},
		{"w1", "http://127.0.0.1:9180/metrics", `the endpoint's host "127.0.0.1" is the address 127.0.0.1: webhooks may not reach the gateway's own listeners`},
		{"w1", "http://localhost:9180/metrics", "gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.ws+" "+tt.endpoint, func(t *testing.T) {
			_, err := rules.Parse(t.Context(), tt.ws, []byte(`{"endpoint":"`+tt.endpoint+`"}`))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && (!errors.Is(err, ErrEndpointNotAllowed) || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("got %v, want endpoint_not_allowed with %q", err, tt.wantErr)
			}
		})
	}
	table.change(func(g *grantTable) { g.fail = errors.New("the database does not answer") })
	if _, err := rules.Parse(t.Context(), "w1", []byte(`{"endpoint":"http://10.0.0.31:9999/h"}`)); !errors.Is(err, ErrGrantsUnavailable) {
		t.Fatalf("a registration without the grants: %v", err)
	}
}

func TestListenerDestinations(t *testing.T) {
	t.Parallel()
	dns := fakeDNS{"edge.internal": {"10.0.0.21", "fd00::21"}}
	for _, tt := range []struct {
		address string
		want    []string
	}{
		{"127.0.0.1:9180", []string{"127.0.0.1:9180"}},
		{"[::1]:8080", []string{"[::1]:8080"}},
		{"edge.internal:443", []string{"10.0.0.21:443", "[fd00::21]:443"}},
	} {
		ds, err := ListenerDestinations(t.Context(), dns, tt.address)
		var got []string
		for _, d := range ds {
			got = append(got, d.String())
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ListenerDestinations(%q) = %q, %v; want %q", tt.address, got, err, tt.want)
		}
	}
	// Every address: the port of each of this host's, loopback's among them.
	ds, err := ListenerDestinations(t.Context(), dns, ":9180")
	if err != nil || !slices.ContainsFunc(ds, func(d Destination) bool { return d.Contains(netip.MustParseAddrPort("127.0.0.1:9180")) }) {
		t.Fatalf("ListenerDestinations(:9180) = %v, %v; want loopback's port among them", ds, err)
	}
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:0", "nowhere.internal:80"} {
		if _, err := ListenerDestinations(t.Context(), dns, bad); err == nil {
			t.Errorf("ListenerDestinations(%q) succeeded", bad)
		}
	}
}
