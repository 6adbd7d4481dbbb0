package admin_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
)

// TestClientNames: a client is created with a name and labels, changed
// over the API (each change a client_update record naming the person and
// every field it moved, before and after), and found by a name's prefix
// and by labels, a page at a time; a name or label that is not one is a
// 400 with its code and changes nothing.
func TestClientNames(t *testing.T) {
	t.Parallel()
	url, callers, st := admin.StartAPI(t)
	op := dial(t, url, callers["operator"])
	ctx := t.Context()
	create := func(name string, labels map[string]string) string {
		t.Helper()
		c, err := op.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w1", Name: name, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		return c.ClientID
	}
	seven := create("Clinic 7", map[string]string{"env": "staging"})
	eight := create("Clinic Eight", map[string]string{"env": "prod"})
	create("Lab Nine", map[string]string{"env": "prod"})
	if got, err := op.GetClient(ctx, seven); err != nil || got.Name != "Clinic 7" || got.Labels["env"] != "staging" {
		t.Fatalf("GetClient: %+v, %v", got, err)
	}

	name := "Clinic Seven"
	got, err := op.UpdateClient(ctx, seven, adminapi.UpdateClientRequest{Name: &name, Labels: map[string]string{"env": "prod", "tier": "gold"}})
	if err != nil || got.Name != name || !reflect.DeepEqual(got.Labels, map[string]string{"env": "prod", "tier": "gold"}) {
		t.Fatalf("UpdateClient: %+v, %v", got, err)
	}
	rs, err := st.ListAudit(ctx, store.AuditFilter{Workspace: "w1", Entity: seven})
	if err != nil || len(rs) != 2 || rs[1].Action != audit.ClientUpdate || rs[1].Person.Name != "alice@example.org" {
		t.Fatalf("the client's records: %+v, %v", rs, err)
	}
	want := []audit.Change{{Field: "name", Before: "Clinic 7", After: "Clinic Seven"},
		{Field: "label:env", Before: "staging", After: "prod"}, {Field: "label:tier", After: "gold"}}
	if !reflect.DeepEqual(rs[1].Changes, want) {
		t.Fatalf("the update's changes: %+v, want %+v", rs[1].Changes, want)
	}

	byName, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[adminapi.Client], error) {
		return op.ListClients(ctx, adminapi.ClientQuery{NamePrefix: "CLINIC", Cursor: cursor, Limit: 1})
	})
	if err != nil || len(byName) != 2 || byName[0].ClientID != eight || byName[1].ClientID != seven {
		t.Fatalf("the clients named Clinic…, a page of one at a time: %+v, %v", byName, err)
	}
	both, err := op.ListClients(ctx, adminapi.ClientQuery{NamePrefix: "clinic", Labels: []string{"env=prod", "tier=gold"}})
	if err != nil || len(both.Items) != 1 || both.Items[0].ClientID != seven {
		t.Fatalf("by a name's prefix and labels: %+v, %v", both, err)
	}
	byLabel, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[adminapi.Client], error) {
		return op.ListClients(ctx, adminapi.ClientQuery{Labels: []string{"env=prod"}, Cursor: cursor, Limit: 2})
	})
	if err != nil || len(byLabel) != 3 || byLabel[0].ClientID != seven {
		t.Fatalf("by label, two a page: %+v, %v", byLabel, err)
	}

	long := strings.Repeat("x", 201)
	for _, tt := range []struct {
		name string
		call func() error
		code string
	}{
		{"a name with a control character", func() error {
			_, err := op.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w1", Name: "a\nb"})
			return err
		}, problem.CodeInvalidName},
		{"a label key that is not one", func() error {
			_, err := op.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w1", Labels: map[string]string{"-env": "x"}})
			return err
		}, problem.CodeInvalidLabel},
		{"a long name", func() error {
			_, err := op.UpdateClient(ctx, seven, adminapi.UpdateClientRequest{Name: &long})
			return err
		}, problem.CodeInvalidName},
		{"a label value with a space", func() error {
			_, err := op.UpdateClient(ctx, seven, adminapi.UpdateClientRequest{Labels: map[string]string{"env": "a b"}})
			return err
		}, problem.CodeInvalidLabel},
		{"a removed key that is not one", func() error {
			_, err := op.UpdateClient(ctx, seven, adminapi.UpdateClientRequest{RemoveLabels: []string{"a b"}})
			return err
		}, problem.CodeInvalidLabel},
		{"a label to search without a value", func() error {
			_, err := op.ListClients(ctx, adminapi.ClientQuery{Labels: []string{"env"}})
			return err
		}, problem.CodeInvalidLabel},
		{"a name prefix with a control character", func() error {
			_, err := op.ListClients(ctx, adminapi.ClientQuery{NamePrefix: "a\x00"})
			return err
		}, problem.CodeInvalidName},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p *problem.Problem
			if err := tt.call(); !errors.As(err, &p) || p.Status != 400 || p.Code != tt.code {
				t.Fatalf("%v, want 400 %s", err, tt.code)
			}
		})
	}
	if rs, _ := st.ListAudit(ctx, store.AuditFilter{Workspace: "w1", Entity: seven}); len(rs) != 2 {
		t.Fatalf("the refusals were recorded: %+v", rs)
	}
	if _, err := op.UpdateClient(ctx, "nobody", adminapi.UpdateClientRequest{Name: &name}); err == nil {
		t.Fatal("an unknown client was updated")
	}
	var p *problem.Problem
	if _, err := dial(t, url, callers["auditor"]).UpdateClient(ctx, seven, adminapi.UpdateClientRequest{Name: &name}); !errors.As(err, &p) || p.Status != 403 {
		t.Fatalf("an auditor's UpdateClient: %v, want 403", err)
	}
}
