package search

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
)

// TestSearchFindsAPersonsRecords: in a store's trail, agent=<a person's
// name> finds that person's changes and reads, and only theirs; a
// client's id finds the client's.
func TestSearchFindsAPersonsRecords(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	for _, e := range []audit.Event{
		{Action: audit.Login, Outcome: audit.Success, Client: audittest.Client},
		{Action: audit.ClientCreate, Outcome: audit.Success, Entity: audit.Entity{Kind: audit.EntityClient, ID: audittest.Client}, Person: audittest.Operator},
		{Action: audit.AuditSearch, Outcome: audit.Success, Entity: audit.Entity{Kind: audit.EntityWorkspace, ID: "alpha"}, Person: audittest.Auditor},
		{Action: audit.SubscriptionDelete, Outcome: audit.Success, Entity: audit.Entity{Kind: audit.EntitySubscription, ID: audittest.Subscription}, Person: audittest.Operator},
	} {
		e.At, e.Workspace = at, "alpha"
		if _, err := st.AppendAudit(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		agent string
		want  []string // each entry's action, in order
	}{
		{audittest.Operator.Name, []string{"client_create", "subscription_delete"}},
		{audittest.Auditor.Name, []string{"audit_search"}},
		{audittest.Client, []string{"login"}},
		{"carol@example.org", nil},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			t.Parallel()
			w := serveStore(t, st, "?agent="+tt.agent)
			if w.Code != 200 {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			var b struct {
				Entry []struct {
					Resource struct {
						Agent []struct {
							Name string `json:"name"`
						} `json:"agent"`
						Subtype []struct{ Code string } `json:"subtype"`
					} `json:"resource"`
				} `json:"entry"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil || len(b.Entry) != len(tt.want) {
				t.Fatalf("%d entries (%v), want %d: %s", len(b.Entry), err, len(tt.want), w.Body)
			}
			for _, e := range b.Entry {
				if tt.agent != audittest.Client && (len(e.Resource.Agent) == 0 || e.Resource.Agent[0].Name != tt.agent) {
					t.Errorf("an entry's agent is %+v, want %s", e.Resource.Agent, tt.agent)
				}
			}
		})
	}
}
