package admin_test

import (
	"context"
	"errors"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/problem"
)

// TestClientKeys: the client's key methods get what the service answers,
// and a refusal as its problem with its code.
func TestClientKeys(t *testing.T) {
	t.Parallel()
	url, callers, _ := admin.StartAPI(t)
	op := dial(t, url, callers["operator"])
	ctx := t.Context()
	c, err := op.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	k, err := op.AddKey(ctx, c.ClientID, adminapi.AddKeyRequest{Kid: "k1"})
	if err != nil || k.Secret == "" || k.Kid != "k1" {
		t.Fatalf("AddKey: %+v, %v", k, err)
	}
	dry, err := op.RotateKey(ctx, c.ClientID, adminapi.RotateKeyRequest{DryRun: true})
	if err != nil || !dry.DryRun || dry.Key != nil {
		t.Fatalf("RotateKey, dry: %+v, %v", dry, err)
	}
	rot, err := op.RotateKey(ctx, c.ClientID, adminapi.RotateKeyRequest{})
	if err != nil || rot.Key == nil || rot.Key.Secret == "" || len(rot.Retiring) != 1 || rot.Retiring[0] != "k1" {
		t.Fatalf("RotateKey: %+v, %v", rot, err)
	}
	ret, err := op.RetireKey(ctx, "k1", adminapi.RetireKeyRequest{})
	if err != nil || !ret.Changed || ret.Key.Status != clientkey.Retired {
		t.Fatalf("RetireKey: %+v, %v", ret, err)
	}
	if got, err := op.GetKey(ctx, "k1"); err != nil || got.Status != clientkey.Retired || got.WorkspaceID != "w1" {
		t.Fatalf("GetKey: %+v, %v", got, err)
	}
	all, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[adminapi.KeyInfo], error) {
		return op.ListKeys(ctx, adminapi.KeyQuery{Client: c.ClientID, Cursor: cursor, Limit: 1})
	})
	if err != nil || len(all) != 2 {
		t.Fatalf("every key of the client, a page of one at a time: %+v, %v", all, err)
	}
	var p *problem.Problem
	if _, err := op.RetireKey(ctx, rot.Key.Kid, adminapi.RetireKeyRequest{}); !errors.As(err, &p) || p.Code != problem.CodeLastActiveKey {
		t.Fatalf("RetireKey of the last active key: %v, want last_active_key", err)
	}
	aud := dial(t, url, callers["auditor"])
	if _, err := aud.AddKey(ctx, c.ClientID, adminapi.AddKeyRequest{}); !errors.As(err, &p) || p.Status != 403 {
		t.Fatalf("an auditor's AddKey: %v, want 403", err)
	}
}
