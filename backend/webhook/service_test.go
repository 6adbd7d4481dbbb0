package webhook

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
)

// TestDeleteBy: an operator deletes a subscription of whatever workspace,
// and its audit record names the person; nobody's deletion and an unknown
// subscription are refused and delete nothing.
func TestDeleteBy(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.EnsureWorkspace(t.Context(), "w1", time.Now()); err != nil {
		t.Fatal(err)
	}
	sub := store.Subscription{ID: "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01", WorkspaceID: "w1", Endpoint: "https://example.com/hook",
		Protocol: ProtocolHTTPS, EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: time.Now()}
	if err := st.CreateSubscription(t.Context(), sub, 0, audit.Event{At: sub.CreatedAt, Action: audit.SubscriptionCreate,
		Outcome: audit.Success, Workspace: "w1", Entity: audit.Entity{Kind: audit.EntitySubscription, ID: sub.ID}}); err != nil {
		t.Fatal(err)
	}
	svc := NewService(st)
	tests := []struct {
		name string
		by   audit.Person
		id   string
		want error
	}{
		{"nobody", audit.Person{}, sub.ID, audit.ErrNoPerson},
		{"an unknown subscription", audittest.Operator, "8d4fcd85-6ea1-4031-a276-5b104f9ead06", store.ErrNotFound},
		{"an operator", audittest.Operator, sub.ID, nil},
		{"the same again", audittest.Operator, sub.ID, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := svc.DeleteBy(t.Context(), tt.by, tt.id)
			if !errors.Is(err, tt.want) || tt.want == nil && got.WorkspaceID != "w1" {
				t.Fatalf("DeleteBy: %+v, %v; want %v", got, err, tt.want)
			}
		})
	}
	rs, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1", Agent: audittest.Operator.Name})
	if err != nil || len(rs) != 1 || rs[0].Action != audit.SubscriptionDelete || rs[0].Entity.ID != sub.ID || rs[0].Person != audittest.Operator {
		t.Fatalf("the deletion's record: %+v, %v", rs, err)
	}
}
