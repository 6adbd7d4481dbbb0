package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// testClientKeyPages: the keys are listed a page at a time in kid order,
// by client, workspace and status alone or together, each once, and
// without their secrets.
func testClientKeyPages(t *testing.T, s Store) {
	var keys []store.ClientKey
	var events []audit.Event
	for i := range 8 {
		// k0..k7: clients c0..c3 (c0 and c2 of w1, c1 and c3 of w2); every
		// third key retiring.
		k := clientKey(fmt.Sprintf("k%d", i), fmt.Sprintf("c%d", i%4))
		k.WorkspaceID = []string{"w1", "w2"}[i%2]
		if i%3 == 0 {
			k.Status, k.RetiringAt = clientkey.Retiring, at(1e9)
		}
		keys, events = append(keys, k), append(events, keyEvent(audit.KeyAdd, k.Kid))
	}
	must(t, s.ImportClientKeys(ctx(t), keys, events))
	tests := []struct {
		name string
		f    store.ClientKeyFilter
		want []string
	}{
		{"a page", store.ClientKeyFilter{Limit: 3}, []string{"k0", "k1", "k2"}},
		{"the next page", store.ClientKeyFilter{After: "k2", Limit: 3}, []string{"k3", "k4", "k5"}},
		{"the last page", store.ClientKeyFilter{After: "k5", Limit: 3}, []string{"k6", "k7"}},
		{"a client", store.ClientKeyFilter{ClientID: "c1", Limit: 10}, []string{"k1", "k5"}},
		{"a workspace", store.ClientKeyFilter{WorkspaceID: "w2", Limit: 10}, []string{"k1", "k3", "k5", "k7"}},
		{"a workspace's next page", store.ClientKeyFilter{WorkspaceID: "w2", After: "k3", Limit: 1}, []string{"k5"}},
		{"a status", store.ClientKeyFilter{Status: clientkey.Retiring, Limit: 10}, []string{"k0", "k3", "k6"}},
		{"a workspace and a status", store.ClientKeyFilter{WorkspaceID: "w1", Status: clientkey.Active, Limit: 10}, []string{"k2", "k4"}},
		{"a client, a workspace and a status", store.ClientKeyFilter{ClientID: "c3", WorkspaceID: "w2", Status: clientkey.Retiring, Limit: 10}, []string{"k3"}},
		{"a client of another workspace", store.ClientKeyFilter{ClientID: "c3", WorkspaceID: "w1", Limit: 10}, nil},
		{"a kid, whatever the rest", store.ClientKeyFilter{Kid: "k4", After: "k7", Limit: 10}, []string{"k4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := s.ListClientKeys(ctx(t), tt.f)
			must(t, err)
			var got []string
			for _, k := range list {
				if k.Secret != "" {
					t.Fatalf("%s listed with its secret", k.Kid)
				}
				got = append(got, k.Kid)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ListClientKeys(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
}
