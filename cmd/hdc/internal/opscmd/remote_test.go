package opscmd

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/storetest"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
	"github.com/health-data-connect/hdc/internal/pki"
)

// operatorName is the person of the remote mode's certificate.
const operatorName = "alice@example.org"

// serveAdmin runs a backend over the data directory dir with the hop's
// mutual TLS, and returns it and the flags of hdc's remote mode as the
// operator alice: --admin, --cert, --key, --ca.
func serveAdmin(t *testing.T, dir string) (*backend.Server, []string) {
	t.Helper()
	hop := filepath.Join(t.TempDir(), "tls")
	if err := pki.InitDir(hop, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if _, err := pki.IssueFromDir(hop, pki.Leaf{Role: pki.Operator, Name: operatorName}, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	cfg := backend.DefaultConfig()
	cfg.DataDir, cfg.Keeper, cfg.ShutdownTimeout = dir, clitest.KeeperURL, 5*time.Second
	cfg.HopCA = filepath.Join(hop, pki.CAFile)
	cfg.HopCert, cfg.HopKey = filepath.Join(hop, pki.CertFile(pki.Backend)), filepath.Join(hop, pki.KeyFile(pki.Backend))
	srv, err := backend.New(t.Context(), cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	var ls [2]net.Listener
	for i := range ls {
		if ls[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ctx, ls[0], ls[1]) })
	t.Cleanup(func() { cancel(); wg.Wait(); srv.Close() })
	return srv, []string{"--admin", "https://" + ls[1].Addr().String(), "--cert", filepath.Join(hop, operatorName+".pem"),
		"--key", filepath.Join(hop, operatorName+"-key.pem"), "--ca", filepath.Join(hop, pki.CAFile)}
}

// remote runs hdc with args in remote mode, with a data directory of its
// own that holds no database: what it does, it does through the API.
func remote(t *testing.T, flags []string, args ...string) (string, error) {
	t.Helper()
	return hdc(t, t.TempDir(), append(args, flags...)...)
}

// TestSharingRemote: hdc sharing grant, list and revoke through the Admin
// API print what they print in direct mode, and the audit records name
// the operator of the certificate.
func TestSharingRemote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, flags := serveAdmin(t, dir)
	a := decode[struct {
		ClientID string `json:"client_id"`
	}](t, mustOut(remote(t, flags, "clients", "create", "--workspace", "acme")))
	mustOut(remote(t, flags, "clients", "create", "--workspace", "globex"))
	out, err := remote(t, flags, "sharing", "grant", "--workspace", "globex", "--client", a.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	g := decode[struct {
		GrantID    string `json:"grant_id"`
		SharingKey string `json:"sharing_key"`
	}](t, out)
	if !strings.HasPrefix(g.SharingKey, "hdc_sk_") {
		t.Fatalf("grant printed %s", out)
	}
	list := mustOut(remote(t, flags, "sharing", "list"))
	if direct := mustOut(hdc(t, dir, "sharing", "list")); list != direct || strings.Contains(list, g.SharingKey) || !strings.Contains(list, g.GrantID) {
		t.Fatalf("sharing list: remote %s, direct %s", list, direct)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"the revocation", []string{"sharing", "revoke", "--grant", g.GrantID}, `{"grant_id":"` + g.GrantID + `","status":"revoked"}`},
		{"the revoked", []string{"sharing", "list", "--status", "revoked", "--client", a.ClientID}, g.GrantID},
		{"another workspace's", []string{"sharing", "list", "--workspace", "acme"}, "[]"},
	}
	for _, tt := range tests {
		out, err := remote(t, flags, tt.args...)
		if err != nil || !strings.Contains(strings.Join(strings.Fields(out), ""), tt.want) {
			t.Fatalf("%s: %s, %v; want %s", tt.name, out, err, tt.want)
		}
	}
	if _, err := remote(t, flags, "sharing", "revoke", "--grant", "nope"); err == nil || !strings.Contains(err.Error(), `no grant "nope"`) {
		t.Fatalf("revoking nothing: %v", err)
	}
	rs, err := srv.Store().ListAudit(t.Context(), store.AuditFilter{Workspace: "globex", Agent: operatorName})
	if err != nil || len(rs) != 3 || rs[1].Action != audit.SharingGrant || rs[2].Action != audit.SharingRevoke || rs[2].Person.Direct {
		t.Fatalf("globex's records by %s: %+v, %v", operatorName, rs, err)
	}
}

// TestSubscriptionsRemote: hdc subscriptions list, get and delete, through
// the Admin API and directly, show any workspace's subscriptions without
// their signing keys, the failing ones alone with --failing; a deletion
// names its author.
func TestSubscriptionsRemote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, flags := serveAdmin(t, dir)
	const key = "whsec-0123456789abcdef"
	var ids []string
	for _, ws := range []string{"acme", "globex"} {
		if _, err := srv.Store().EnsureWorkspace(t.Context(), ws, time.Now()); err != nil {
			t.Fatal(err)
		}
		sub := store.Subscription{ID: uuid.NewString(), WorkspaceID: ws, Endpoint: "https://example.com/" + ws, Protocol: "https",
			EventNames: []string{"user.delete"}, SigningKey: key, Status: store.SubscriptionActive, CreatedAt: time.Now()}
		if err := srv.Store().CreateSubscription(t.Context(), sub, 0, audit.Event{At: sub.CreatedAt, Action: audit.SubscriptionCreate,
			Outcome: audit.Success, Workspace: ws, Entity: audit.Entity{Kind: audit.EntitySubscription, ID: sub.ID}}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sub.ID)
	}
	list := mustOut(remote(t, flags, "subscriptions", "list"))
	if direct := mustOut(hdc(t, dir, "subscriptions", "list")); list != direct || strings.Contains(list, key) || !strings.Contains(list, ids[1]) {
		t.Fatalf("subscriptions list: remote %s, direct %s", list, direct)
	}
	// An hour ahead: the server's own dispatcher claims what is due now.
	storetest.FailAttempt(t, srv.Store(), "globex", time.Now().UTC().Add(time.Hour))
	failing := mustOut(remote(t, flags, "subscriptions", "list", "--failing"))
	if direct := mustOut(hdc(t, dir, "subscriptions", "list", "--failing")); failing != direct || !strings.Contains(failing, ids[1]) ||
		strings.Contains(failing, ids[0]) || !strings.Contains(failing, `"failing_since": "`) {
		t.Fatalf("subscriptions list --failing: remote %s, direct %s", failing, direct)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a workspace's", []string{"subscriptions", "list", "--workspace", "globex"}, `"workspace_id":"globex"`},
		{"one", []string{"subscriptions", "get", "--subscription", ids[0]}, `"has_signing_key":true`},
		{"its deletion", []string{"subscriptions", "delete", "--subscription", ids[0]}, `"status":"deleted"`},
		{"the disabled", []string{"subscriptions", "list", "--status", "disabled"}, "[]"},
	}
	for _, tt := range tests {
		out, err := remote(t, flags, tt.args...)
		if err != nil || strings.Contains(out, key) || !strings.Contains(strings.Join(strings.Fields(out), ""), tt.want) {
			t.Fatalf("%s: %s, %v; want %s", tt.name, out, err, tt.want)
		}
	}
	if _, err := remote(t, flags, "subscriptions", "get", "--subscription", ids[0]); err == nil || !strings.Contains(err.Error(), "no subscription") {
		t.Fatalf("the deleted one: %v", err)
	}
	if _, err := hdc(t, dir, "subscriptions", "list", "--status", "gone"); err == nil || !strings.Contains(err.Error(), "status must be") {
		t.Fatalf("a status of nothing, directly: %v", err)
	}
	rs, err := srv.Store().ListAudit(t.Context(), store.AuditFilter{Workspace: "acme", Agent: operatorName, Entity: ids[0]})
	if err != nil || len(rs) != 1 || rs[0].Action != audit.SubscriptionDelete || rs[0].Person.Role != "operator" {
		t.Fatalf("acme's deletion by %s: %+v, %v", operatorName, rs, err)
	}
}

// TestDeliveriesRemote: hdc subscriptions deliveries and delivery, through
// the Admin API and directly, read a delivery's attempts; redeliver and
// recover make failed deliveries due again, each recorded under its
// author's name.
func TestDeliveriesRemote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, flags := serveAdmin(t, dir)
	st := srv.Store()
	if _, err := st.EnsureWorkspace(t.Context(), "acme", time.Now()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	sub := store.Subscription{ID: uuid.NewString(), WorkspaceID: "acme", Endpoint: "https://example.com/acme", Protocol: "https",
		EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: now}
	if err := st.CreateSubscription(t.Context(), sub, 0, audit.Event{At: now, Action: audit.SubscriptionCreate,
		Outcome: audit.Success, Workspace: "acme", Entity: audit.Entity{Kind: audit.EntitySubscription, ID: sub.ID}}); err != nil {
		t.Fatal(err)
	}
	// The events are an hour ahead, so that the server's own dispatcher,
	// which claims what is due now, leaves their deliveries to this test.
	later := now.Add(time.Hour)
	var ids []string
	for _, ev := range []string{"e1", "e2"} {
		ds, err := st.PublishEvent(t.Context(), store.Event{ID: ev, WorkspaceID: "acme", Type: "user.delete", Data: []byte(`{}`), CreatedAt: later})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ds...)
	}
	claimed, err := st.ClaimDeliveries(t.Context(), store.Claim{Owner: "t", Now: later.Add(time.Second), LeaseUntil: later.Add(time.Minute), Limit: 10})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	for _, id := range ids {
		if err := st.FinishAttempt(t.Context(), "t", store.Attempt{DeliveryID: id, StartedAt: later.Add(time.Second), Outcome: "timeout"},
			store.Next{Status: store.DeliveryFailed}); err != nil {
			t.Fatal(err)
		}
	}
	list := mustOut(remote(t, flags, "subscriptions", "deliveries", "--subscription", sub.ID, "--status", "given_up"))
	if direct := mustOut(hdc(t, dir, "subscriptions", "deliveries", "--subscription", sub.ID, "--status", "given_up")); list != direct ||
		!strings.Contains(list, ids[0]) || !strings.Contains(list, ids[1]) {
		t.Fatalf("deliveries: remote %s, direct %s", list, direct)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"one delivery", []string{"subscriptions", "delivery", "--subscription", sub.ID, "--delivery", ids[0]}, `"outcome":"timeout"`},
		{"a recovery", []string{"subscriptions", "recover", "--subscription", sub.ID, "--since", now.Add(-time.Minute).Format(time.RFC3339)}, `"recovered":2`},
		{"a redelivery", []string{"subscriptions", "redeliver", "--subscription", sub.ID, "--delivery", ids[0]}, `"id":"` + ids[0] + `"`},
	}
	for _, tt := range tests {
		out, err := remote(t, flags, tt.args...)
		if err != nil || !strings.Contains(strings.Join(strings.Fields(out), ""), tt.want) {
			t.Fatalf("%s: %s, %v; want %s", tt.name, out, err, tt.want)
		}
	}
	if _, err := remote(t, flags, "subscriptions", "recover", "--subscription", sub.ID, "--since", "yesterday"); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Fatalf("a since of nothing: %v", err)
	}
	if _, err := remote(t, flags, "subscriptions", "deliveries", "--subscription", sub.ID, "--status", "lost"); err == nil || !strings.Contains(err.Error(), "status must be") {
		t.Fatalf("a status of nothing: %v", err)
	}
	rs, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: "acme", Agent: operatorName, Entity: sub.ID})
	if err != nil || len(rs) != 2 || rs[0].Action != audit.DeliveryRecover || rs[1].Action != audit.DeliveryRedeliver {
		t.Fatalf("acme's records by %s: %+v, %v", operatorName, rs, err)
	}
}

// TestClientLimitsRemote: hdc clients limits set, show and clear, through
// the Admin API and directly, hold a client's overrides; a change names
// its author; a rate of no known form changes nothing.
func TestClientLimitsRemote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, flags := serveAdmin(t, dir)
	var c struct {
		ClientID string `json:"client_id"`
	}
	if err := json.Unmarshal([]byte(mustOut(remote(t, flags, "clients", "create", "--workspace", "acme"))), &c); err != nil {
		t.Fatal(err)
	}
	set := mustOut(remote(t, flags, "clients", "limits", "set", "--client", c.ClientID, "--rate", "writes=100:20", "--rate", "reads=none",
		"--upload-bytes-per-day", "10485760"))
	if direct := mustOut(hdc(t, dir, "clients", "limits", "show", "--client", c.ClientID)); direct != set ||
		!strings.Contains(strings.Join(strings.Fields(set), ""), `"writes":{"per_second":100,"burst":20}`) {
		t.Fatalf("limits set %s; shown directly %s", set, direct)
	}
	for _, bad := range []string{"writes=100", "deletes=1:1", "reads=-1:1"} {
		if _, err := remote(t, flags, "clients", "limits", "set", "--client", c.ClientID, "--rate", bad); err == nil {
			t.Fatalf("--rate %s was taken", bad)
		}
	}
	if _, err := remote(t, flags, "clients", "limits", "show", "--client", "nobody"); err == nil || !strings.Contains(err.Error(), `no client "nobody"`) {
		t.Fatalf("an unknown client: %v", err)
	}
	if out := mustOut(remote(t, flags, "clients", "limits", "clear", "--client", c.ClientID)); strings.Contains(out, "writes") {
		t.Fatalf("cleared: %s", out)
	}
	rs, err := srv.Store().ListAudit(t.Context(), store.AuditFilter{Workspace: "acme", Agent: operatorName, Entity: c.ClientID})
	if err != nil || len(rs) != 3 || rs[1].Action != audit.ClientLimitsSet || rs[2].Action != audit.ClientLimitsClear ||
		rs[2].Changes == nil || rs[2].Changes[0].Before == "" {
		t.Fatalf("acme's records by %s: %+v, %v", operatorName, rs, err)
	}
}

// TestDestinationsRemote: hdc subscriptions destinations grant, list and
// revoke, through the Admin API and directly, hold a workspace's private
// receivers; each change names its author; a name or an unknown workspace
// changes nothing.
func TestDestinationsRemote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, flags := serveAdmin(t, dir)
	mustOut(remote(t, flags, "clients", "create", "--workspace", "acme"))
	var g struct {
		ID, Prefix string
		Port       *int
	}
	out := mustOut(remote(t, flags, "subscriptions", "destinations", "grant", "--workspace", "acme", "--destination", "10.0.0.31:9999"))
	if err := json.Unmarshal([]byte(out), &g); err != nil || g.Prefix != "10.0.0.31/32" || g.Port == nil || *g.Port != 9999 {
		t.Fatalf("granted: %s", out)
	}
	mustOut(hdc(t, dir, "subscriptions", "destinations", "grant", "--workspace", "acme", "--destination", "10.0.7.0/28"))
	listed := mustOut(remote(t, flags, "subscriptions", "destinations", "list", "--workspace", "acme"))
	if direct := mustOut(hdc(t, dir, "subscriptions", "destinations", "list", "--workspace", "acme")); direct != listed ||
		!strings.Contains(listed, g.ID) || !strings.Contains(listed, `"10.0.7.0/28"`) {
		t.Fatalf("listed %s; directly %s", listed, direct)
	}
	for _, bad := range [][]string{{"--workspace", "acme", "--destination", "hooks.internal:9999"}, {"--workspace", "nowhere", "--destination", "10.0.0.32"},
		{"--workspace", "acme", "--destination", "10.0.0.32:0"}, {"--workspace", "acme", "--destination", "169.254.169.254:80"}} {
		if _, err := remote(t, flags, append([]string{"subscriptions", "destinations", "grant"}, bad...)...); err == nil {
			t.Fatalf("grant %q was made", bad)
		}
	}
	if _, err := remote(t, flags, "subscriptions", "destinations", "revoke", "--workspace", "acme", "--grant", uuid.NewString()); err == nil ||
		!strings.Contains(err.Error(), "no grant") {
		t.Fatalf("an unknown grant: %v", err)
	}
	if out := mustOut(remote(t, flags, "subscriptions", "destinations", "revoke", "--workspace", "acme", "--grant", g.ID)); !strings.Contains(out, `"revoked_by": "`+operatorName+`"`) {
		t.Fatalf("revoked: %s", out)
	}
	rs, err := srv.Store().ListAudit(t.Context(), store.AuditFilter{Workspace: "acme", Agent: operatorName, Entity: g.ID})
	if err != nil || len(rs) != 2 || rs[0].Action != audit.DestinationGrant || rs[1].Action != audit.DestinationRevoke {
		t.Fatalf("the grant's records by %s: %+v, %v", operatorName, rs, err)
	}
}
