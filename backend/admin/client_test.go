package admin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/admin/adminclient"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
)

// TestClient: the client's methods get what the service answers, and a
// refusal as its problem.
func TestClient(t *testing.T) {
	t.Parallel()
	url, callers, st := admin.StartAPI(t)
	op := dial(t, url, callers["operator"])
	ctx := t.Context()
	me, err := op.Whoami(ctx)
	if err != nil || me.Name != "alice@example.org" || me.Role != "operator" {
		t.Fatalf("Whoami: %+v, %v", me, err)
	}
	c, err := op.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w1"})
	if err != nil || c.ClientSecret == "" {
		t.Fatalf("CreateClient: %+v, %v", c, err)
	}
	if got, err := op.GetClient(ctx, c.ClientID); err != nil || got.ClientID != c.ClientID || got.WorkspaceID != "w1" {
		t.Fatalf("GetClient: %+v, %v", got, err)
	}
	if got, err := op.DisableClient(ctx, c.ClientID); err != nil || got.Status != string(store.ClientDisabled) {
		t.Fatalf("DisableClient: %+v, %v", got, err)
	}
	all, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[adminapi.Client], error) {
		return op.ListClients(ctx, adminapi.ClientQuery{Cursor: cursor, Limit: 1})
	})
	if err != nil || len(all) != 1 || all[0].ClientID != c.ClientID {
		t.Fatalf("every client, a page of one at a time: %+v, %v", all, err)
	}
	if ws, err := op.ListWorkspaces(ctx, adminapi.PageQuery{}); err != nil || len(ws.Items) != 1 || ws.Items[0].ID != "w1" {
		t.Fatalf("ListWorkspaces: %+v, %v", ws, err)
	}
	var p *problem.Problem
	if _, err := op.GetClient(ctx, "nobody"); !errors.As(err, &p) || p.Code != problem.CodeNotFound {
		t.Fatalf("GetClient of nobody: %v, want the problem not_found", err)
	}
	aud := dial(t, url, callers["auditor"])
	if _, err := aud.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w1"}); !errors.As(err, &p) || p.Status != 403 {
		t.Fatalf("an auditor's CreateClient: %v, want 403", err)
	}
	if list, err := st.ListClients(ctx, store.ClientFilter{}); err != nil || len(list) != 1 {
		t.Fatalf("clients: %d, %v", len(list), err)
	}
}

func TestClientURL(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"http://backend:9081", "backend:9081", "https://user:pw@backend:9081", "https://backend:9081/?k=v", "",
		"https://backend:9081/admin"} {
		if _, err := adminclient.New(adminclient.SplitURLs(bad), nil, 0); err == nil {
			t.Errorf("New(%q) accepted", bad)
		} else if msg := err.Error(); strings.Contains(msg, "pw") || strings.Contains(msg, "k=v") {
			t.Errorf("New(%q): %v quotes a credential", bad, err)
		}
	}
}
