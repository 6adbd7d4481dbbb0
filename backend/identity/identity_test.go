package identity

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/credential"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/contract"
)

func newService(t *testing.T) (*Service, store.Store) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return New(st, 2), st
}

func TestCreateClient(t *testing.T) {
	svc, st := newService(t)
	if _, err := svc.CreateClient(t.Context(), audittest.Operator, "bad id", Meta{}); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("invalid workspace id: %v", err)
	}
	cred, err := svc.CreateClient(t.Context(), audittest.Operator, "acme", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cred.ClientSecret, "hdc_cs_") || cred.WorkspaceID != "acme" || !contract.IsUUID(cred.ClientID) {
		t.Fatalf("credentials = %+v", cred)
	}
	if _, err := st.GetWorkspace(t.Context(), "acme"); err != nil {
		t.Fatalf("workspace not created: %v", err)
	}
	c, err := st.GetClient(t.Context(), cred.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.SecretHash, cred.ClientSecret) || !strings.HasPrefix(c.SecretHash, "$hmac-sha256$") {
		t.Fatalf("stored secret hash %q", c.SecretHash)
	}
	// A second client joins the existing workspace.
	if _, err := svc.CreateClient(t.Context(), audittest.Operator, "acme", Meta{}); err != nil {
		t.Fatal(err)
	}
	list, err := svc.ListClients(t.Context(), store.ClientFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(list)
	if len(list) != 2 || strings.Contains(string(out), "secret") || strings.Contains(string(out), "hmac") {
		t.Fatalf("ListClients = %s", out)
	}
}

func TestAuthenticate(t *testing.T) {
	svc, _ := newService(t)
	ctx := t.Context()
	a, _ := svc.CreateClient(ctx, audittest.Operator, "wa", Meta{})
	b, _ := svc.CreateClient(ctx, audittest.Operator, "wb", Meta{})
	off, _ := svc.CreateClient(ctx, audittest.Operator, "wa", Meta{})
	if err := svc.DisableClient(ctx, audittest.Operator, off.ClientID); err != nil {
		t.Fatal(err)
	}
	grant, err := svc.GrantSharing(ctx, audittest.Operator, "wb", a.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	revoked, _ := svc.GrantSharing(ctx, audittest.Operator, "wb", a.ClientID)
	if err := svc.RevokeSharing(ctx, audittest.Operator, revoked.GrantID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                 string
		client, secret, key  string
		wantErr              error
		wantWorkspace, grant string
	}{
		{"own workspace", a.ClientID, a.ClientSecret, "", nil, "wa", ""},
		{"wrong secret", a.ClientID, b.ClientSecret, "", ErrInvalidClient, "", ""},
		{"unknown client", "nobody", a.ClientSecret, "", ErrInvalidClient, "", ""},
		{"disabled client", off.ClientID, off.ClientSecret, "", ErrInvalidClient, "", ""},
		{"sharing key", a.ClientID, a.ClientSecret, grant.SharingKey, nil, "wb", grant.GrantID},
		{"revoked sharing key", a.ClientID, a.ClientSecret, revoked.SharingKey, ErrInvalidSharingKey, "", ""},
		{"unknown sharing key", a.ClientID, a.ClientSecret, "hdc_sk_nope", ErrInvalidSharingKey, "", ""},
		{"another client's key", b.ClientID, b.ClientSecret, grant.SharingKey, ErrInvalidSharingKey, "", ""},
		{"key without the secret", a.ClientID, "wrong", grant.SharingKey, ErrInvalidClient, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := svc.Authenticate(ctx, tt.client, tt.secret, tt.key)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if p.WorkspaceID != tt.wantWorkspace || p.GrantID != tt.grant {
				t.Fatalf("principal = %+v", p)
			}
		})
	}
	if err := svc.CheckGrant(ctx, grant.GrantID, a.ClientID); err != nil {
		t.Fatalf("CheckGrant(live) = %v", err)
	}
	for _, tc := range [][2]string{{revoked.GrantID, a.ClientID}, {grant.GrantID, b.ClientID}, {"nope", a.ClientID}} {
		if err := svc.CheckGrant(ctx, tc[0], tc[1]); !errors.Is(err, ErrInvalidSharingKey) {
			t.Errorf("CheckGrant(%s, %s) = %v", tc[0], tc[1], err)
		}
	}
	if err := svc.CheckClient(ctx, a.ClientID); err != nil {
		t.Fatalf("CheckClient(active) = %v", err)
	}
	for _, id := range []string{off.ClientID, "nobody"} {
		if err := svc.CheckClient(ctx, id); !errors.Is(err, ErrInvalidClient) {
			t.Errorf("CheckClient(%s) = %v", id, err)
		}
	}
}

func TestGrantSharingErrors(t *testing.T) {
	svc, _ := newService(t)
	ctx := t.Context()
	a, _ := svc.CreateClient(ctx, audittest.Operator, "wa", Meta{})
	if _, err := svc.CreateClient(ctx, audittest.Operator, "wb", Meta{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.GrantSharing(ctx, audittest.Operator, "nope", a.ClientID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown workspace: %v", err)
	}
	if _, err := svc.GrantSharing(ctx, audittest.Operator, "wb", "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown client: %v", err)
	}
	if _, err := svc.GrantSharing(ctx, audittest.Operator, "wa", a.ClientID); !errors.Is(err, ErrOwnWorkspace) {
		t.Errorf("grant to the client's own workspace: %v", err)
	}
	if _, err := svc.GrantSharing(ctx, audittest.Operator, "a/b", a.ClientID); !errors.Is(err, ErrInvalidID) {
		t.Errorf("grant of an invalid workspace id: %v", err)
	}
	if err := svc.RevokeSharing(ctx, audittest.Operator, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
	if err := svc.DisableClient(ctx, audittest.Operator, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("disable unknown: %v", err)
	}
}

// legacyClient stores a client whose secret an earlier version hashed with
// argon2id, as the store of such a version holds it.
func legacyClient(t *testing.T, st store.Store, workspace, secret string) store.Client {
	t.Helper()
	if _, err := st.EnsureWorkspace(t.Context(), workspace, time.Now()); err != nil {
		t.Fatal(err)
	}
	c := store.Client{ID: uuid.NewString(), WorkspaceID: workspace, Status: store.ClientActive, CreatedAt: time.Now(),
		SecretHash: credential.Hash(secret, credential.Params{Memory: 64, Time: 1, Threads: 1})}
	e := audit.Event{At: c.CreatedAt, Action: audit.ClientCreate, Outcome: audit.Success, Workspace: workspace,
		Entity: audit.Entity{Kind: audit.EntityClient, ID: c.ID}}
	if err := st.CreateClient(t.Context(), c, e); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAuthenticateMovesLegacyHashes: a secret an earlier version stored
// as argon2id still logs in, and its hash moves to the keyed hash then;
// a wrong secret moves nothing.
func TestAuthenticateMovesLegacyHashes(t *testing.T) {
	svc, st := newService(t)
	const secret = "hdc_cs_an-earlier-version-issued-this"
	c := legacyClient(t, st, "legacy", secret)
	if _, err := svc.Authenticate(t.Context(), c.ID, secret+"x", ""); !errors.Is(err, ErrInvalidClient) {
		t.Fatalf("a wrong secret: %v", err)
	}
	if got, _ := st.GetClient(t.Context(), c.ID); got.SecretHash != c.SecretHash {
		t.Fatal("a wrong secret moved the hash")
	}
	for i := range 2 {
		if _, err := svc.Authenticate(t.Context(), c.ID, secret, ""); err != nil {
			t.Fatalf("login %d: %v", i+1, err)
		}
		got, err := st.GetClient(t.Context(), c.ID)
		if err != nil || !credential.IsMAC(got.SecretHash) {
			t.Fatalf("after login %d the stored hash is %.20q, %v", i+1, got.SecretHash, err)
		}
	}
}

// TestLegacyVerificationsWaitBounded: with every argon2id slot taken, a
// login of a client with a legacy hash is refused with ErrBusy after the
// bounded wait, while a client with the keyed hash logs in at once.
func TestLegacyVerificationsWaitBounded(t *testing.T) {
	svc, st := newService(t)
	svc.wait = 50 * time.Millisecond
	const secret = "hdc_cs_an-earlier-version-issued-this"
	legacy := legacyClient(t, st, "legacy", secret)
	current, err := svc.CreateClient(t.Context(), audittest.Operator, "current", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	for range cap(svc.slots) {
		svc.slots <- struct{}{}
	}
	if _, err := svc.Authenticate(t.Context(), legacy.ID, secret, ""); !errors.Is(err, ErrBusy) {
		t.Fatalf("a legacy login with every slot taken: %v, want ErrBusy", err)
	}
	if _, err := svc.Authenticate(t.Context(), current.ClientID, current.ClientSecret, ""); err != nil {
		t.Fatalf("a current login with every slot taken: %v", err)
	}
}

// TestOperatorChangesNameTheirAuthor: each operator's change is recorded
// with the person who made it, and a change that names nobody is refused
// and changes nothing.
func TestOperatorChangesNameTheirAuthor(t *testing.T) {
	svc, st := newService(t)
	ctx := t.Context()
	a, err := svc.CreateClient(ctx, audittest.Operator, "wa", Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateClient(ctx, audittest.Direct, "wb", Meta{}); err != nil {
		t.Fatal(err)
	}
	g, err := svc.GrantSharing(ctx, audittest.Operator, "wb", a.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RevokeSharing(ctx, audittest.Operator, g.GrantID); err != nil {
		t.Fatal(err)
	}
	if err := svc.DisableClient(ctx, audittest.Operator, a.ClientID); err != nil {
		t.Fatal(err)
	}
	refusals := map[string]error{
		"create":  func() error { _, err := svc.CreateClient(ctx, audit.Person{}, "wc", Meta{}); return err }(),
		"disable": svc.DisableClient(ctx, audit.Person{}, a.ClientID),
		"grant":   func() error { _, err := svc.GrantSharing(ctx, audit.Person{}, "wb", a.ClientID); return err }(),
		"revoke":  svc.RevokeSharing(ctx, audit.Person{}, g.GrantID),
	}
	for name, err := range refusals {
		if !errors.Is(err, audit.ErrNoPerson) {
			t.Errorf("%s naming nobody: %v, want audit.ErrNoPerson", name, err)
		}
	}
	want := map[string][]audit.Person{
		"wa": {audittest.Operator, audittest.Operator},
		"wb": {audittest.Direct, audittest.Operator, audittest.Operator},
	}
	for ws, persons := range want {
		rs, err := st.ListAudit(ctx, store.AuditFilter{Workspace: ws})
		if err != nil || len(rs) != len(persons) {
			t.Fatalf("%s's trail: %d records, %v; want %d", ws, len(rs), err, len(persons))
		}
		for i, r := range rs {
			if r.Person != persons[i] {
				t.Errorf("%s's record %d (%s) names %+v, want %+v", ws, r.Seq, r.Action, r.Person, persons[i])
			}
		}
	}
}
