package delivery

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// grantTable is a webhook.GrantStore whose grants and backends a test
// changes.
type grantTable struct {
	mu       sync.Mutex
	grants   []store.WebhookDestination
	backends []store.FleetBackend
}

func (g *grantTable) set(grants ...store.WebhookDestination) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.grants = grants
}

func (g *grantTable) ListDestinations(_ context.Context, f store.DestinationFilter) ([]store.WebhookDestination, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
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
	return g.backends, nil
}

// connServer answers 200 on loopback, counting requests and connections.
func connServer(t *testing.T) (srv *httptest.Server, port uint16, reqs, conns *atomic.Int64) {
	reqs, conns = new(atomic.Int64), new(atomic.Int64)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reqs.Add(1) }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, uint16(srv.Listener.Addr().(*net.TCPAddr).Port), reqs, conns
}

// sendAs makes one attempt at endpoint for a subscription of workspace.
func sendAs(t *testing.T, h *httpSender, workspace, endpoint string) Result {
	t.Helper()
	d := testDelivery("a-signing-key-0123456789")
	d.Subscription.WorkspaceID, d.Subscription.Endpoint = workspace, endpoint
	m, err := NewMessage(d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	return h.send(ctx, d.Subscription, m)
}

// TestGrantedDestinations: a private receiver granted to one workspace is
// delivered to for that workspace alone, at once although the copy of
// the grants is older than the grant (a refusal reads them afresh), on a
// connection of each delivery (none kept that another workspace, or the
// same after a revocation, could reuse); another port of it, another
// workspace and the workspace once the grant is revoked are refused
// without a connection; the answer is never kept, whatever keepBody says.
func TestGrantedDestinations(t *testing.T) {
	t.Parallel()
	srv, port, reqs, conns := connServer(t)
	table := &grantTable{}
	grants := webhook.NewGrants(table, time.Hour)
	h := newHTTPSender(webhook.NewGuard(webhook.GuardConfig{Grants: grants}), time.Second)
	h.keepBody = true
	if r := sendAs(t, h, "w1", srv.URL); r.Outcome != OutcomeAddressRefused {
		t.Fatalf("w1 before its grant: %+v", r)
	}
	granted := store.WebhookDestination{WorkspaceID: "w1", Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: port}
	table.set(granted) // the copy, read above, lives an hour
	for i := range 3 {
		if r := sendAs(t, h, "w1", srv.URL); !r.Delivered || r.Body != "" {
			t.Fatalf("delivery %d to w1's granted receiver: %+v", i, r)
		}
	}
	if reqs.Load() != 3 || conns.Load() != 3 {
		t.Fatalf("%d requests on %d connections, want 3 on 3: a granted workspace's connections are not kept", reqs.Load(), conns.Load())
	}
	if r := sendAs(t, h, "w2", srv.URL); r.Outcome != OutcomeAddressRefused {
		t.Fatalf("w2, which has no grant: %+v", r)
	}
	otherPort := granted
	otherPort.Port++
	table.set(otherPort)
	grants.Forget()
	if r := sendAs(t, h, "w1", srv.URL); r.Outcome != OutcomeAddressRefused {
		t.Fatalf("w1 granted another port: %+v", r)
	}
	table.set()
	grants.Forget()
	if r := sendAs(t, h, "w1", srv.URL); r.Outcome != OutcomeAddressRefused {
		t.Fatalf("w1 after the revocation: %+v", r)
	}
	if reqs.Load() != 3 || conns.Load() != 3 {
		t.Fatalf("the refusals reached the receiver: %d requests, %d connections", reqs.Load(), conns.Load())
	}
}

// TestGatewayListenersRefused: a listener of the gateway, named in the
// guard's configuration or by a backend's heartbeat, is refused whatever
// the allow-list or a grant admits, before any connection.
func TestGatewayListenersRefused(t *testing.T) {
	t.Parallel()
	named, namedPort, namedReqs, _ := connServer(t)
	beating, _, beatingReqs, _ := connServer(t)
	loopback1 := netip.MustParsePrefix("127.0.0.1/32")
	table := &grantTable{backends: []store.FleetBackend{{ID: "b2", Address: beating.Listener.Addr().String()}}}
	table.set(store.WebhookDestination{WorkspaceID: "w1", Prefix: loopback1})
	g := webhook.NewGuard(webhook.GuardConfig{Allow: loopback, Grants: webhook.NewGrants(table, time.Hour),
		Refused: []webhook.Destination{{Prefix: loopback1, Port: namedPort}}})
	h := newHTTPSender(g, time.Second)
	for _, ws := range []string{"w1", "w2"} {
		for _, url := range []string{named.URL, beating.URL} {
			if r := sendAs(t, h, ws, url); r.Outcome != OutcomeAddressRefused || !r.Permanent {
				t.Errorf("%s to %s: %+v", ws, url, r)
			}
		}
	}
	if namedReqs.Load() != 0 || beatingReqs.Load() != 0 {
		t.Fatalf("the gateway's listeners were reached")
	}
	// Another loopback port is still allowed.
	other, _, otherReqs, _ := connServer(t)
	if r := sendAs(t, h, "w2", other.URL); !r.Delivered || otherReqs.Load() != 1 {
		t.Fatalf("another loopback port: %+v", r)
	}
}
