package storetest

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// testGrantPages: sharing grants are listed a page at a time in creation
// order, by workspace, client and status, each once.
func testGrantPages(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	for i, g := range []struct{ id, ws, client string }{{"g3", "w2", "c1"}, {"g1", "w1", "c2"}, {"g2", "w2", "c1"}, {"g4", "w1", "c2"}} {
		// g2 and g4 share a creation time: the id orders them.
		created := at(time.Duration(min(i, 2)+1) * time.Second)
		must(t, s.CreateSharingGrant(ctx(t), store.SharingGrant{ID: g.id, WorkspaceID: g.ws, ClientID: g.client,
			KeyHash: bytes.Repeat([]byte{byte(i)}, 32), CreatedAt: created}, operator(audit.SharingGrant, g.ws)))
	}
	must(t, s.RevokeSharingGrant(ctx(t), "g2", at(time.Hour), operator(audit.SharingRevoke, "w2")))
	tests := []struct {
		name string
		f    store.GrantFilter
		want []string
	}{
		{"every grant", store.GrantFilter{}, []string{"g3", "g1", "g2", "g4"}},
		{"a page", store.GrantFilter{Limit: 2}, []string{"g3", "g1"}},
		{"the next page", store.GrantFilter{After: store.Cursor{CreatedAt: at(2 * time.Second), ID: "g1"}, Limit: 2}, []string{"g2", "g4"}},
		{"a workspace", store.GrantFilter{WorkspaceID: "w2"}, []string{"g3", "g2"}},
		{"a client", store.GrantFilter{ClientID: "c2"}, []string{"g1", "g4"}},
		{"the revoked", store.GrantFilter{Status: store.GrantRevoked}, []string{"g2"}},
		{"the active", store.GrantFilter{Status: store.GrantActive}, []string{"g3", "g1", "g4"}},
		{"all three", store.GrantFilter{WorkspaceID: "w2", ClientID: "c1", Status: store.GrantActive, Limit: 5}, []string{"g3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := s.ListSharingGrants(ctx(t), tt.f)
			must(t, err)
			if got := ids(list, func(g store.SharingGrant) string { return g.ID }); !slices.Equal(got, tt.want) {
				t.Fatalf("ListSharingGrants(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
}

// testSubscriptionPages: the subscriptions of every workspace are listed a
// page at a time in creation order, by workspace and status, each once
// with its event names; one is read by id alone.
func testSubscriptionPages(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	for i, sub := range []struct{ id, ws string }{{"s3", "w2"}, {"s1", "w1"}, {"s2", "w2"}, {"s4", "w1"}} {
		status := store.SubscriptionActive
		if sub.id == "s2" {
			status = store.SubscriptionDisabled
		}
		must(t, s.CreateSubscription(ctx(t), store.Subscription{ID: sub.id, WorkspaceID: sub.ws, Endpoint: "https://example.com/" + sub.id,
			Protocol: "https", EventNames: []string{"user.delete", "receipt.created"}, Status: status,
			CreatedAt: at(time.Duration(min(i, 2)+1) * time.Second)}, 0, ev(audit.SubscriptionCreate)))
	}
	tests := []struct {
		name string
		f    store.SubscriptionFilter
		want []string
	}{
		{"every subscription", store.SubscriptionFilter{}, []string{"s3", "s1", "s2", "s4"}},
		{"a page", store.SubscriptionFilter{Limit: 3}, []string{"s3", "s1", "s2"}},
		{"the next page", store.SubscriptionFilter{After: store.Cursor{CreatedAt: at(3 * time.Second), ID: "s2"}, Limit: 3}, []string{"s4"}},
		{"a workspace", store.SubscriptionFilter{WorkspaceID: "w1"}, []string{"s1", "s4"}},
		{"a status", store.SubscriptionFilter{Status: store.SubscriptionDisabled}, []string{"s2"}},
		{"both", store.SubscriptionFilter{WorkspaceID: "w2", Status: store.SubscriptionActive, Limit: 1}, []string{"s3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := s.ListSubscriptions(ctx(t), tt.f)
			must(t, err)
			if got := ids(list, func(s store.Subscription) string { return s.ID }); !slices.Equal(got, tt.want) {
				t.Fatalf("ListSubscriptions(%+v) = %v, want %v", tt.f, got, tt.want)
			}
			for _, sub := range list {
				if !slices.Equal(sub.EventNames, []string{"receipt.created", "user.delete"}) {
					t.Fatalf("%s's events: %v", sub.ID, sub.EventNames)
				}
			}
		})
	}
	got, err := s.GetSubscription(ctx(t), "", "s2")
	if err != nil || got.WorkspaceID != "w2" || got.Status != store.SubscriptionDisabled {
		t.Fatalf("GetSubscription of any workspace: %+v, %v", got, err)
	}
	_, err = s.GetSubscription(ctx(t), "", "s9")
	wantErr(t, err, store.ErrNotFound)
}

// ids returns the id of each item of list, in order.
func ids[T any](list []T, id func(T) string) []string {
	out := make([]string, 0, len(list))
	for _, it := range list {
		out = append(out, id(it))
	}
	return out
}

// testSubscriptionsFailing: a list by Failing holds the subscriptions
// whose last attempt failed and those a failure disabled, not those
// delivered to or disabled by their client; Through ends it, and
// SubscriptionWindow finds the end of a window in creation order when
// more follow.
func testSubscriptionsFailing(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	for _, sub := range []struct{ id, ws string }{{"s1", "w1"}, {"s2", "w1"}, {"s3", "w1"}, {"s4", "w1"}, {"s5", "w2"}} {
		subscribe(t, s, sub.id, sub.ws, "receipt.created")
	}
	publish(t, s, "e1", "w1", "receipt.created", at(0))
	publish(t, s, "e2", "w2", "receipt.created", at(0))
	retry := store.Next{Status: store.DeliveryPending, RetryAt: at(time.Hour)}
	next := map[string]store.Next{"s1": {Status: store.DeliveryDelivered}, "s2": retry,
		"s3": {Status: store.DeliveryFailed, DisableSubscription: true, Disabled: ev(audit.DeliveryDisabled)},
		"s4": {Status: store.DeliveryDelivered}, "s5": retry}
	for _, d := range claim(t, s, "a", at(time.Second), 10) {
		must(t, s.FinishAttempt(ctx(t), "a", attempt(d.ID, at(time.Second), "http_410", 410), next[d.Subscription.ID]))
	}
	_, err := s.SetSubscriptionEnabled(ctx(t), "w1", "s4", store.Enablement{At: at(time.Minute), Event: ev(audit.SubscriptionDisable)})
	must(t, err)
	failing := store.SubscriptionFilter{Failing: true}
	with := func(fn func(*store.SubscriptionFilter)) store.SubscriptionFilter { f := failing; fn(&f); return f }
	pos := func(id string) store.Cursor { return store.Cursor{CreatedAt: at(0), ID: id} }
	for _, tt := range []struct {
		name string
		f    store.SubscriptionFilter
		want []string
	}{
		{"failing", failing, []string{"s2", "s3", "s5"}},
		{"failing in a workspace", with(func(f *store.SubscriptionFilter) { f.WorkspaceID = "w1" }), []string{"s2", "s3"}},
		{"failing and active", with(func(f *store.SubscriptionFilter) { f.Status = store.SubscriptionActive }), []string{"s2", "s5"}},
		{"failing through s3", with(func(f *store.SubscriptionFilter) { f.Through = pos("s3") }), []string{"s2", "s3"}},
		{"failing after s2, one", with(func(f *store.SubscriptionFilter) { f.After, f.Limit = pos("s2"), 1 }), []string{"s3"}},
		{"every one through s2", store.SubscriptionFilter{Through: pos("s2")}, []string{"s1", "s2"}},
	} {
		list, err := s.ListSubscriptions(ctx(t), tt.f)
		must(t, err)
		if got := ids(list, func(s store.Subscription) string { return s.ID }); !slices.Equal(got, tt.want) {
			t.Errorf("%s: ListSubscriptions(%+v) = %v, want %v", tt.name, tt.f, got, tt.want)
		}
	}
	for _, tt := range []struct {
		f    store.SubscriptionFilter
		n    int
		want string // "" for none
	}{
		{store.SubscriptionFilter{}, 2, "s2"},
		{store.SubscriptionFilter{Failing: true, Limit: 1}, 2, "s2"}, // Failing and Limit aside
		{store.SubscriptionFilter{After: pos("s2")}, 2, "s4"},
		{store.SubscriptionFilter{After: pos("s2")}, 3, ""}, // s5 ends the list
		{store.SubscriptionFilter{After: pos("s4")}, 2, ""},
		{store.SubscriptionFilter{WorkspaceID: "w1"}, 3, "s3"},
		{store.SubscriptionFilter{WorkspaceID: "w1"}, 4, ""},
		{store.SubscriptionFilter{Status: store.SubscriptionDisabled}, 1, "s3"},
		{store.SubscriptionFilter{Status: store.SubscriptionDisabled}, 2, ""},
	} {
		c, ok, err := s.SubscriptionWindow(ctx(t), tt.f, tt.n)
		must(t, err)
		if want := pos(tt.want); ok != (tt.want != "") || ok && (c.ID != want.ID || !c.CreatedAt.Equal(want.CreatedAt)) ||
			!ok && c != (store.Cursor{}) {
			t.Errorf("SubscriptionWindow(%+v, %d) = %+v, %v; want %q", tt.f, tt.n, c, ok, tt.want)
		}
	}
}
