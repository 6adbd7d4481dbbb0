package opscmd

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
)

// serveBackend runs a backend on loopback with its data in dir and returns
// the base URL of its internal listener.
func serveBackend(t *testing.T, dir string) (*backend.Server, string) {
	t.Helper()
	cfg := backend.DefaultConfig()
	cfg.DataDir = dir
	cfg.Keeper = clitest.KeeperURL
	srv, err := backend.New(t.Context(), cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	var lns [2]net.Listener
	for i := range lns {
		if lns[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lns[0], lns[1]) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
	})
	return srv, "http://" + lns[1].Addr().String()
}

func TestEventsPublish(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, internal := serveBackend(t, dir)
	if _, err := srv.Identity().CreateClient(t.Context(), audittest.Operator, "acme", identity.Meta{}); err != nil {
		t.Fatal(err)
	}
	st, err := storage.OpenStore(t.Context(), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.CreateSubscription(t.Context(), store.Subscription{
		ID: "s1", WorkspaceID: "acme", Endpoint: "https://hooks.example.com/h", Protocol: "https",
		EventNames: []string{"receipt.created"}, Status: store.SubscriptionActive, CreatedAt: time.Now(),
	}, 0, audit.Event{At: time.Now(), Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: "acme"})
	if err != nil {
		t.Fatal(err)
	}

	publish := func(args ...string) clitest.Result {
		return clitest.Run(t, nil, append([]string{"events", "publish", "--backend-internal", internal}, args...)...)
	}
	res := publish("--workspace", "acme", "--type", "receipt.created", "--data", `{"receipt_id": "r-1"}`)
	if res.Err != nil {
		t.Fatalf("publish: %v: %s", res.Err, res.Stderr)
	}
	pub := decode[webhook.Published](t, string(res.Stdout))
	if pub.ID == "" || pub.Deliveries != 1 {
		t.Fatalf("publish printed %s", res.Stdout)
	}
	if pub := decode[webhook.Published](t, string(publish("--workspace", "acme", "--type", "user.delete", "--data", "{}").Stdout)); pub.Deliveries != 0 {
		t.Fatalf("user.delete has %d deliveries, want 0", pub.Deliveries)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--workspace", "acme", "--type", "receipt.voided", "--data", "{}"}, "unknown_event"},
		{[]string{"--workspace", "nobody", "--type", "user.delete", "--data", "{}"}, "unknown_workspace"},
		{[]string{"--workspace", "acme", "--type", "user.delete", "--data", "[1]"}, "data must be a JSON object"},
		{[]string{"--workspace", "acme", "--type", "user.delete", "--data", "{oops"}, "--data is not JSON"},
		{[]string{"--workspace", "acme", "--type", "user.delete"}, `"data" not set`},
	} {
		res := publish(tt.args...)
		if res.Err == nil || !strings.Contains(string(res.Stderr), tt.want) || len(res.Stdout) != 0 {
			t.Errorf("publish %q: %v, stderr %q; want a failure mentioning %q", tt.args, res.Err, res.Stderr, tt.want)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	res = clitest.Run(t, nil, "events", "publish", "--backend-internal", down, "--workspace", "acme", "--type", "user.delete", "--data", "{}")
	if res.Err == nil {
		t.Fatal("publishing to a backend that is down succeeded")
	}
}
