package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

func testSubscriptions(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	sub := store.Subscription{
		ID: "s1", WorkspaceID: "w1", Endpoint: "https://example.com/hook", Protocol: "https",
		EventNames: []string{"receipt.created", "appointment.created"}, SigningKey: "0123456789abcdef",
		DeliveryFormat: store.FormatEka, Status: store.SubscriptionActive, CreatedAt: at(0),
	}
	must(t, s.CreateSubscription(ctx(t), sub, 0, ev(audit.SubscriptionCreate)))
	dup := sub
	dup.ID = "s2"
	wantErr(t, s.CreateSubscription(ctx(t), dup, 0, ev(audit.SubscriptionCreate)), store.ErrConflict)
	other := dup
	other.WorkspaceID = "w2"
	other.SigningKey, other.DeliveryFormat = "", ""
	other.EventNames = []string{"user.delete"}
	other.CreatedAt = at(time.Second)
	must(t, s.CreateSubscription(ctx(t), other, 0, ev(audit.SubscriptionCreate)))
	orphan := dup
	orphan.ID, orphan.WorkspaceID = "s3", "nope"
	wantErr(t, s.CreateSubscription(ctx(t), orphan, 0, ev(audit.SubscriptionCreate)), store.ErrNotFound)
	second := sub
	second.ID, second.Endpoint, second.Protocol, second.CreatedAt = "s4", "arn:aws:lambda:eu-west-1:123456789012:function:f", "lambda", at(time.Minute)
	must(t, s.CreateSubscription(ctx(t), second, 0, ev(audit.SubscriptionCreate)))

	list, err := s.ListSubscriptions(ctx(t), store.SubscriptionFilter{WorkspaceID: "w1"})
	must(t, err)
	if len(list) != 2 || list[0].ID != "s1" || list[1].ID != "s4" {
		t.Fatalf("ListSubscriptions(w1) = %+v", list)
	}
	want := sub
	want.EventNames = []string{"appointment.created", "receipt.created"}
	if fmt.Sprint(list[0]) != fmt.Sprint(want) {
		t.Fatalf("subscription = %+v, want %+v", list[0], want)
	}
	got, err := s.GetSubscription(ctx(t), "w2", "s2")
	must(t, err)
	if got.SigningKey != "" || !slices.Equal(got.EventNames, []string{"user.delete"}) || !got.LastDeliveryAt.IsZero() || got.LastDeliveryOutcome != "" ||
		got.DeliveryFormat != store.FormatStandardWebhooks {
		t.Fatalf("GetSubscription(w2, s2) = %+v", got)
	}
	_, err = s.GetSubscription(ctx(t), "w2", "s1")
	wantErr(t, err, store.ErrNotFound)

	wantErr(t, s.DeleteSubscription(ctx(t), "w2", "s1", ev(audit.SubscriptionDelete)), store.ErrNotFound)
	if _, err := s.GetSubscription(ctx(t), "w1", "s1"); err != nil {
		t.Fatalf("a foreign delete removed the subscription: %v", err)
	}
	must(t, s.DeleteSubscription(ctx(t), "w1", "s1", ev(audit.SubscriptionDelete)))
	wantErr(t, s.DeleteSubscription(ctx(t), "w1", "s1", ev(audit.SubscriptionDelete)), store.ErrNotFound)
	list, err = s.ListSubscriptions(ctx(t), store.SubscriptionFilter{WorkspaceID: "w1"})
	must(t, err)
	if len(list) != 1 || list[0].ID != "s4" {
		t.Fatalf("after delete: %+v", list)
	}
	// The endpoint is free again once deleted.
	must(t, s.CreateSubscription(ctx(t), store.Subscription{
		ID: "s5", WorkspaceID: "w1", Endpoint: sub.Endpoint, Protocol: "https",
		EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: at(time.Hour),
	}, 0, ev(audit.SubscriptionCreate)))
}

func testSubscriptionLimit(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	sub := func(id, ws string) store.Subscription {
		return store.Subscription{ID: id, WorkspaceID: ws, Endpoint: "https://example.com/" + id, Protocol: "https",
			EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: at(0)}
	}
	must(t, s.CreateSubscription(ctx(t), sub("a", "w1"), 2, ev(audit.SubscriptionCreate)))
	must(t, s.CreateSubscription(ctx(t), sub("b", "w1"), 2, ev(audit.SubscriptionCreate)))
	wantErr(t, s.CreateSubscription(ctx(t), sub("c", "w1"), 2, ev(audit.SubscriptionCreate)), store.ErrLimit)
	must(t, s.CreateSubscription(ctx(t), sub("d", "w2"), 2, ev(audit.SubscriptionCreate))) // per workspace
	must(t, s.DeleteSubscription(ctx(t), "w1", "a", ev(audit.SubscriptionDelete)))
	must(t, s.CreateSubscription(ctx(t), sub("c", "w1"), 2, ev(audit.SubscriptionCreate)))
	must(t, s.CreateSubscription(ctx(t), sub("e", "w1"), 0, ev(audit.SubscriptionCreate))) // no limit
	list, err := s.ListSubscriptions(ctx(t), store.SubscriptionFilter{WorkspaceID: "w1"})
	must(t, err)
	if len(list) != 3 {
		t.Fatalf("%d subscriptions, want 3", len(list))
	}

	// Concurrent creations never exceed the limit.
	const n, limit = 8, 3
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.CreateSubscription(ctx(t), sub(fmt.Sprint("r", i), "w2"), limit, ev(audit.SubscriptionCreate))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, store.ErrLimit) {
			t.Fatalf("unexpected error %v", err)
		}
	}
	list, err = s.ListSubscriptions(ctx(t), store.SubscriptionFilter{WorkspaceID: "w2"})
	must(t, err)
	if len(list) != limit {
		t.Fatalf("%d subscriptions after concurrent creations with a limit of %d", len(list), limit)
	}
}
