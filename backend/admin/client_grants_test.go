package admin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
)

// TestClientGrantsAndSubscriptions: the client's methods of the grants and
// the subscriptions get what the service answers, and a refusal as its
// problem.
func TestClientGrantsAndSubscriptions(t *testing.T) {
	t.Parallel()
	url, callers, st := admin.StartAPI(t)
	op := dial(t, url, callers["operator"])
	ctx := t.Context()
	a, err := op.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w2"}); err != nil {
		t.Fatal(err)
	}
	g, err := op.CreateGrant(ctx, "w2", a.ClientID)
	if err != nil || g.SharingKey == "" || g.WorkspaceID != "w2" {
		t.Fatalf("CreateGrant: %+v, %v", g, err)
	}
	if got, err := op.GetGrant(ctx, g.GrantID); err != nil || got.ClientID != a.ClientID {
		t.Fatalf("GetGrant: %+v, %v", got, err)
	}
	if got, err := op.RevokeGrant(ctx, g.GrantID); err != nil || got.RevokedAt.IsZero() {
		t.Fatalf("RevokeGrant: %+v, %v", got, err)
	}
	grants, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[adminapi.Grant], error) {
		return op.ListGrants(ctx, adminapi.GrantQuery{Status: string(store.GrantRevoked), Cursor: cursor, Limit: 1})
	})
	if err != nil || len(grants) != 1 || grants[0].GrantID != g.GrantID {
		t.Fatalf("the revoked grants: %+v, %v", grants, err)
	}
	var p *problem.Problem
	if _, err := op.CreateGrant(ctx, "w1", a.ClientID); !errors.As(err, &p) || p.Code != problem.CodeInvalidRequest {
		t.Fatalf("a grant of the client's own workspace: %v, want invalid_request", err)
	}

	sub := store.Subscription{ID: "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01", WorkspaceID: "w1", Endpoint: "https://example.com/hook",
		Protocol: "https", EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: time.Now()}
	if err := st.CreateSubscription(ctx, sub, 0, audit.Event{At: sub.CreatedAt, Action: audit.SubscriptionCreate, Outcome: audit.Success,
		Workspace: "w1", Entity: audit.Entity{Kind: audit.EntitySubscription, ID: sub.ID}}); err != nil {
		t.Fatal(err)
	}
	if page, err := op.ListSubscriptions(ctx, adminapi.SubscriptionQuery{Workspace: "w1"}); err != nil || len(page.Items) != 1 || page.Items[0].ID != sub.ID {
		t.Fatalf("ListSubscriptions: %+v, %v", page, err)
	}
	if got, err := op.GetSubscription(ctx, sub.ID); err != nil || got.WorkspaceID != "w1" || got.Endpoint != sub.Endpoint {
		t.Fatalf("GetSubscription: %+v, %v", got, err)
	}
	if got, err := op.DeleteSubscription(ctx, sub.ID); err != nil || got.ID != sub.ID {
		t.Fatalf("DeleteSubscription: %+v, %v", got, err)
	}
	if _, err := op.DeleteSubscription(ctx, sub.ID); !errors.As(err, &p) || p.Code != problem.CodeNotFound {
		t.Fatalf("deleting it again: %v, want not_found", err)
	}
}
