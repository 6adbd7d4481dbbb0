package identity

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// mustClient creates a client in workspace.
func mustClient(t *testing.T, svc *Service, workspace string) Credentials {
	t.Helper()
	c, err := svc.CreateClient(t.Context(), audittest.Operator, workspace, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCheckCaller(t *testing.T) {
	svc, _ := newService(t)
	ctx := t.Context()
	a, b, disabled := mustClient(t, svc, "ws-a"), mustClient(t, svc, "ws-b"), mustClient(t, svc, "ws-a")
	if err := svc.DisableClient(ctx, audittest.Operator, disabled.ClientID); err != nil {
		t.Fatal(err)
	}
	grant, err := svc.GrantSharing(ctx, audittest.Operator, "ws-b", a.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := svc.GrantSharing(ctx, audittest.Operator, "ws-b", a.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RevokeSharing(ctx, audittest.Operator, revoked.GrantID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                   string
		client, workspace, gnt string
		ok                     bool
	}{
		{"in its own workspace", a.ClientID, "ws-a", "", true},
		{"through its grant", a.ClientID, "ws-b", grant.GrantID, true},
		{"in another workspace without a grant", a.ClientID, "ws-b", "", false},
		{"through a revoked grant", a.ClientID, "ws-b", revoked.GrantID, false},
		{"through its grant, in another workspace", a.ClientID, "ws-a", grant.GrantID, false},
		{"through another client's grant", b.ClientID, "ws-b", grant.GrantID, false},
		{"through an unknown grant", a.ClientID, "ws-b", "no-such-grant", false},
		{"disabled", disabled.ClientID, "ws-a", "", false},
		{"unknown", "no-such-client", "ws-a", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := svc.CheckCaller(ctx, tt.client, tt.workspace, tt.gnt)
			if tt.ok && err != nil || !tt.ok && !errors.Is(err, ErrRevokedCaller) {
				t.Fatalf("CheckCaller = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestCheckLogin: a token's login must be a live login of its client;
// a token that names none (issued before logins were named) passes.
func TestCheckLogin(t *testing.T) {
	svc, st := newService(t)
	ctx := t.Context()
	a, b := mustClient(t, svc, "ws-a"), mustClient(t, svc, "ws-b")
	now := time.Now()
	login := func(id string) {
		f := store.RefreshFamily{ID: id, ClientID: a.ClientID, WorkspaceID: "ws-a", CreatedAt: now}
		tok := store.RefreshToken{Hash: []byte(id + "-token"), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		e := audit.Event{At: now, Action: audit.Login, Outcome: audit.Success, Workspace: "ws-a", Client: a.ClientID}
		if err := st.CreateRefreshFamily(ctx, f, tok, e); err != nil {
			t.Fatal(err)
		}
	}
	live, revoked := uuid.NewString(), uuid.NewString()
	login(live)
	login(revoked)
	if err := st.RevokeRefreshFamily(ctx, revoked, now); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, client, session string
		ok                    bool
	}{
		{"a live login", a.ClientID, live, true},
		{"no login named", a.ClientID, "", true},
		{"a revoked login", a.ClientID, revoked, false},
		{"another client's login", b.ClientID, live, false},
		{"an unknown login", a.ClientID, uuid.NewString(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckLogin(ctx, st, tt.client, tt.session)
			if tt.ok && err != nil || !tt.ok && !errors.Is(err, ErrRevokedCaller) {
				t.Fatalf("CheckLogin = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestCallersRemember: an answer is remembered for the ttl, then asked
// again.
func TestCallersRemember(t *testing.T) {
	svc, st := newService(t)
	ctx := t.Context()
	c := mustClient(t, svc, "ws-a")
	const ttl = time.Second
	callers := NewCallers(svc, st, 10, ttl)
	caller := Caller{Client: c.ClientID, Workspace: "ws-a"}
	if err := callers.Check(ctx, caller); err != nil {
		t.Fatal(err)
	}
	if err := svc.DisableClient(ctx, audittest.Operator, c.ClientID); err != nil {
		t.Fatal(err)
	}
	if err := callers.Check(ctx, caller); err != nil {
		t.Fatalf("within the ttl: %v, want the remembered answer", err)
	}
	var err error
	if !testkit.WaitFor(10*ttl, func() bool { err = callers.Check(ctx, caller); return errors.Is(err, ErrRevokedCaller) }) {
		t.Fatalf("after the ttl: %v, want ErrRevokedCaller", err)
	}
}
