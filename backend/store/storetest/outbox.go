package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// lease is the lease the outbox tests claim with.
const lease = time.Minute

// subscribe creates an active subscription of ws to events.
func subscribe(t *testing.T, s Store, id, ws string, events ...string) {
	t.Helper()
	must(t, s.CreateSubscription(ctx(t), store.Subscription{
		ID: id, WorkspaceID: ws, Endpoint: "https://example.com/" + id, Protocol: "https",
		EventNames: events, SigningKey: "key-of-" + id + "-0123456789", DeliveryFormat: store.FormatEka, Status: store.SubscriptionActive, CreatedAt: at(0),
	}, 0, ev(audit.SubscriptionCreate)))
}

// traceParent is the trace context the published events carry (the W3C
// specification's example).
const traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// publish publishes an event of type typ in ws at time created and
// returns its delivery ids.
func publish(t *testing.T, s Store, id, ws, typ string, created time.Time) []string {
	t.Helper()
	ids, err := s.PublishEvent(ctx(t), store.Event{
		ID: id, WorkspaceID: ws, Type: typ, Data: []byte(`{"n":"` + id + `"}`), CreatedAt: created, TraceParent: traceParent,
	})
	must(t, err)
	return ids
}

// claim claims up to limit deliveries for owner at now.
func claim(t *testing.T, s Store, owner string, now time.Time, limit int) []store.Delivery {
	t.Helper()
	ds, err := s.ClaimDeliveries(ctx(t), store.Claim{Owner: owner, Now: now, LeaseUntil: now.Add(lease), Limit: limit})
	must(t, err)
	return ds
}

func deliveryIDs(ds []store.Delivery) []string {
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.ID)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids []string) []string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return ids
}

func getDelivery(t *testing.T, s Store, id string) store.Delivery {
	t.Helper()
	d, err := s.GetDelivery(ctx(t), id)
	must(t, err)
	return d
}

func stats(t *testing.T, s Store) store.OutboxStats {
	t.Helper()
	st, err := s.OutboxStats(ctx(t))
	must(t, err)
	return st
}

// attempt is a finished attempt of delivery id started at start.
func attempt(id string, start time.Time, outcome string, code int) store.Attempt {
	return store.Attempt{DeliveryID: id, StartedAt: start, Duration: 250 * time.Millisecond, Outcome: outcome, StatusCode: code}
}

func testOutboxPublish(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	subscribe(t, s, "all", "w1", "appointment.created", "receipt.created", "user.delete")
	subscribe(t, s, "receipts", "w1", "receipt.created")
	subscribe(t, s, "other", "w2", "receipt.created")
	off := store.Subscription{
		ID: "off", WorkspaceID: "w1", Endpoint: "https://example.com/off", Protocol: "https",
		EventNames: []string{"receipt.created"}, Status: store.SubscriptionDisabled, CreatedAt: at(0),
	}
	must(t, s.CreateSubscription(ctx(t), off, 0, ev(audit.SubscriptionCreate)))

	if ids := publish(t, s, "e0", "w1", "prescription.created", at(0)); len(ids) != 0 {
		t.Fatalf("an event nobody selects got deliveries %q", ids)
	}
	ids := publish(t, s, "e1", "w1", "receipt.created", at(time.Second))
	if len(ids) != 2 || ids[0] == ids[1] || ids[0] == "" {
		t.Fatalf("receipt.created in w1: deliveries %q, want two distinct (all, receipts)", ids)
	}
	var subs []string
	for _, id := range ids {
		d := getDelivery(t, s, id)
		subs = append(subs, d.Subscription.ID)
		if d.Status != store.DeliveryPending || d.Attempts != 0 || !d.NextAttemptAt.Equal(at(time.Second)) ||
			!d.CreatedAt.Equal(at(time.Second)) || d.LeaseOwner != "" || !d.FinishedAt.IsZero() {
			t.Fatalf("new delivery = %+v", d)
		}
		if d.Event.ID != "e1" || d.Event.WorkspaceID != "w1" || d.Event.Type != "receipt.created" ||
			string(d.Event.Data) != `{"n":"e1"}` || !d.Event.CreatedAt.Equal(at(time.Second)) || d.Event.TraceParent != traceParent {
			t.Fatalf("delivery's event = %+v", d.Event)
		}
		if d.Subscription.WorkspaceID != "w1" || d.Subscription.Endpoint != "https://example.com/"+d.Subscription.ID ||
			d.Subscription.SigningKey != "key-of-"+d.Subscription.ID+"-0123456789" || d.Subscription.Status != store.SubscriptionActive ||
			d.Subscription.DeliveryFormat != store.FormatEka {
			t.Fatalf("delivery's subscription = %+v", d.Subscription)
		}
	}
	if slices.Sort(subs); !slices.Equal(subs, []string{"all", "receipts"}) {
		t.Fatalf("deliveries go to %q", subs)
	}

	// Nothing of a failed publication stays: not the event, not a delivery.
	_, err := s.PublishEvent(ctx(t), store.Event{ID: "e1", WorkspaceID: "w1", Type: "user.delete", Data: []byte(`{}`), CreatedAt: at(0)})
	wantErr(t, err, store.ErrConflict)
	_, err = s.PublishEvent(ctx(t), store.Event{ID: "e9", WorkspaceID: "nope", Type: "user.delete", Data: []byte(`{}`), CreatedAt: at(0)})
	wantErr(t, err, store.ErrNotFound)
	if st := stats(t, s); st.Pending != 2 || !st.OldestPending.Equal(at(time.Second)) {
		t.Fatalf("stats = %+v, want the 2 deliveries of e1", st)
	}
	_, err = s.GetDelivery(ctx(t), "nope")
	wantErr(t, err, store.ErrNotFound)

	// Deleting a subscription deletes its deliveries.
	must(t, s.DeleteSubscription(ctx(t), "w1", "receipts", ev(audit.SubscriptionDelete)))
	if st := stats(t, s); st.Pending != 1 {
		t.Fatalf("after deleting a subscription %d deliveries pending, want 1", st.Pending)
	}
}

func testOutboxClaim(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	subscribe(t, s, "s1", "w1", "receipt.created")
	var want []string
	for i := range 3 {
		want = append(want, publish(t, s, fmt.Sprint("e", i), "w1", "receipt.created", at(time.Duration(i)*time.Second))...)
	}
	later := publish(t, s, "e-late", "w1", "receipt.created", at(time.Hour))

	if ds := claim(t, s, "a", at(0), 0); len(ds) != 0 {
		t.Fatalf("a claim of 0 returned %d", len(ds))
	}
	first := claim(t, s, "a", at(time.Second), 10)
	if got := deliveryIDs(first); !slices.Equal(got, sorted(want[:2])) {
		t.Fatalf("claim at 1s = %q, want the 2 due deliveries %q", got, want[:2])
	}
	if first[0].NextAttemptAt.After(first[1].NextAttemptAt) {
		t.Fatal("claims are not earliest due first")
	}
	for _, d := range first {
		if d.LeaseOwner != "a" || !d.LeaseExpiresAt.Equal(at(time.Second).Add(lease)) || d.Event.ID == "" || d.Subscription.Endpoint == "" ||
			d.Event.TraceParent != traceParent {
			t.Fatalf("claimed delivery = %+v", d)
		}
	}
	// Leased deliveries are nobody else's until the lease expires.
	second := claim(t, s, "b", at(10*time.Second), 10)
	if got := deliveryIDs(second); !slices.Equal(got, want[2:]) {
		t.Fatalf("claim by b = %q, want only the unleased %q", got, want[2:])
	}
	expired := at(time.Second).Add(lease)
	again := claim(t, s, "c", expired, 1)
	if len(again) != 1 || !slices.Contains(want[:2], again[0].ID) {
		t.Fatalf("after a's lease expired c claimed %q, want one of %q", deliveryIDs(again), want[:2])
	}
	// a's lease on that delivery is lost; on the other it is still a's.
	wantErr(t, s.FinishAttempt(ctx(t), "a", attempt(again[0].ID, at(2*time.Second), "delivered", 200),
		store.Next{Status: store.DeliveryDelivered}), store.ErrLeaseLost)
	wantErr(t, s.ReleaseDelivery(ctx(t), "a", again[0].ID), store.ErrLeaseLost)
	for _, d := range first {
		if d.ID != again[0].ID {
			must(t, s.ReleaseDelivery(ctx(t), "a", d.ID))
			if got := claim(t, s, "d", at(3*time.Second), 10); len(got) != 1 || got[0].ID != d.ID {
				t.Fatalf("a released delivery is not claimable at once: %q", deliveryIDs(got))
			}
		}
	}
	if d := getDelivery(t, s, later[0]); d.LeaseOwner != "" || d.Status != store.DeliveryPending {
		t.Fatalf("a delivery due later was claimed: %+v", d)
	}
}

// claimCapped claims up to limit deliveries for owner at now, at most cap
// of one workspace under lease.
func claimCapped(t *testing.T, s Store, owner string, now time.Time, limit, cap int) []string {
	t.Helper()
	ds, err := s.ClaimDeliveries(ctx(t), store.Claim{Owner: owner, Now: now, LeaseUntil: now.Add(lease), Limit: limit, PerWorkspace: cap})
	must(t, err)
	return deliveryIDs(ds)
}

// testOutboxClaimTurns: workspaces take turns, and a workspace's leases,
// whoever holds them, count against its cap until they end.
func testOutboxClaimTurns(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	subscribe(t, s, "s1", "w1", "receipt.created")
	subscribe(t, s, "s2", "w2", "receipt.created")
	var w1 []string
	for i := range 5 {
		w1 = append(w1, publish(t, s, fmt.Sprint("e", i), "w1", "receipt.created", at(time.Duration(i)*time.Second))...)
	}
	w2 := publish(t, s, "e5", "w2", "receipt.created", at(5*time.Second))
	now := at(10 * time.Second)
	steps := []struct {
		name  string
		claim func(t *testing.T) []string
		want  []string
	}{
		{"each workspace's first before any second", func(t *testing.T) []string { return claimCapped(t, s, "a", now, 2, 0) },
			sorted([]string{w1[0], w2[0]})},
		{"up to the cap, the other claim's lease counted", func(t *testing.T) []string { return claimCapped(t, s, "b", now, 10, 3) },
			sorted(w1[1:3])},
		{"nothing past the cap", func(t *testing.T) []string { return claimCapped(t, s, "c", now, 10, 3) }, nil},
		{"a released lease frees its place", func(t *testing.T) []string {
			must(t, s.ReleaseDelivery(ctx(t), "a", w1[0]))
			return claimCapped(t, s, "d", now, 10, 3)
		}, w1[:1]},
		{"expired leases count no more", func(t *testing.T) []string { return claimCapped(t, s, "e", now.Add(lease), 10, 3) },
			sorted([]string{w1[0], w1[1], w1[2], w2[0]})},
	}
	for _, st := range steps { // in order: each step starts from the one before
		t.Run(st.name, func(t *testing.T) {
			if got := st.claim(t); !slices.Equal(got, st.want) {
				t.Fatalf("claimed %q, want %q", got, st.want)
			}
		})
	}
}

func testOutboxConcurrentClaims(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	subscribe(t, s, "s1", "w1", "receipt.created")
	subscribe(t, s, "s2", "w1", "receipt.created")
	var want []string
	for i := range 10 {
		want = append(want, publish(t, s, fmt.Sprint("e", i), "w1", "receipt.created", at(0))...)
	}
	const workers = 8
	got := make([][]store.Delivery, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			got[i], errs[i] = s.ClaimDeliveries(ctx(t), store.Claim{Owner: fmt.Sprint("w", i), Now: at(time.Second), LeaseUntil: at(time.Minute), Limit: 3})
		})
	}
	wg.Wait()
	var all []store.Delivery
	for i := range workers {
		must(t, errs[i])
		for _, d := range got[i] {
			if d.LeaseOwner != fmt.Sprint("w", i) {
				t.Fatalf("worker %d got a delivery leased to %q", i, d.LeaseOwner)
			}
		}
		all = append(all, got[i]...)
	}
	if ids := deliveryIDs(all); !slices.Equal(ids, sorted(want)) {
		t.Fatalf("concurrent claims returned %d deliveries (%d distinct), want each of the %d exactly once",
			len(ids), len(slices.Compact(ids)), len(want))
	}
}

func testOutboxTransitions(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	subscribe(t, s, "s1", "w1", "receipt.created")
	subscribe(t, s, "s2", "w1", "receipt.created")
	bySub := map[string][]string{}
	for i := range 3 {
		for _, id := range publish(t, s, fmt.Sprint("e", i), "w1", "receipt.created", at(0)) {
			d := getDelivery(t, s, id)
			bySub[d.Subscription.ID] = append(bySub[d.Subscription.ID], id)
		}
	}
	claimed := claim(t, s, "a", at(time.Second), 10)
	if len(claimed) != 6 {
		t.Fatalf("claimed %d, want 6", len(claimed))
	}
	ok, retried, gaveUp := bySub["s1"][0], bySub["s1"][1], bySub["s1"][2]

	// Retry: pending again, due at RetryAt, not claimable before; the
	// failed attempt's end is kept (the log shows it failed).
	retryAt := at(time.Minute)
	must(t, s.FinishAttempt(ctx(t), "a", attempt(retried, at(time.Second), "http_503", 503),
		store.Next{Status: store.DeliveryPending, RetryAt: retryAt}))
	d := getDelivery(t, s, retried)
	if d.Status != store.DeliveryPending || d.Attempts != 1 || !d.NextAttemptAt.Equal(retryAt) || d.LeaseOwner != "" ||
		!d.FinishedAt.Equal(at(time.Second).Add(250*time.Millisecond)) {
		t.Fatalf("retried delivery = %+v", d)
	}
	if got := claim(t, s, "b", retryAt.Add(-time.Microsecond), 10); len(got) != 0 {
		t.Fatalf("claimed %q before the retry was due", deliveryIDs(got))
	}
	again := claim(t, s, "b", retryAt, 10)
	if len(again) != 1 || again[0].ID != retried || again[0].Attempts != 1 {
		t.Fatalf("claim at the retry time = %+v", again)
	}
	// Deliver it on the second attempt.
	must(t, s.FinishAttempt(ctx(t), "b", attempt(retried, retryAt, "delivered", 204), store.Next{Status: store.DeliveryDelivered}))
	d = getDelivery(t, s, retried)
	if d.Status != store.DeliveryDelivered || d.Attempts != 2 || !d.FinishedAt.Equal(retryAt.Add(250*time.Millisecond)) {
		t.Fatalf("delivered delivery = %+v", d)
	}
	wantErr(t, s.FinishAttempt(ctx(t), "b", attempt(retried, retryAt, "delivered", 204), store.Next{Status: store.DeliveryDelivered}), store.ErrLeaseLost)
	attempts, err := s.ListAttempts(ctx(t), retried)
	must(t, err)
	if len(attempts) != 2 || attempts[0].Number != 1 || attempts[0].Outcome != "http_503" || attempts[0].StatusCode != 503 ||
		!attempts[0].StartedAt.Equal(at(time.Second)) || attempts[0].Duration != 250*time.Millisecond ||
		attempts[1].Number != 2 || attempts[1].Outcome != "delivered" || attempts[1].DeliveryID != retried {
		t.Fatalf("attempts = %+v", attempts)
	}
	// The subscription shows the latest attempt, even when an older one
	// finishes after it.
	must(t, s.FinishAttempt(ctx(t), "a", attempt(ok, at(time.Second), "delivered", 200), store.Next{Status: store.DeliveryDelivered}))
	sub, err := s.GetSubscription(ctx(t), "w1", "s1")
	must(t, err)
	if !sub.LastDeliveryAt.Equal(retryAt) || sub.LastDeliveryOutcome != "delivered" {
		t.Fatalf("s1 last delivery = %v %q, want %v delivered", sub.LastDeliveryAt, sub.LastDeliveryOutcome, retryAt)
	}

	// Give up: failed and finished.
	must(t, s.FinishAttempt(ctx(t), "a", attempt(gaveUp, at(2*time.Second), "timeout", 0), store.Next{Status: store.DeliveryFailed}))
	if d := getDelivery(t, s, gaveUp); d.Status != store.DeliveryFailed || d.Attempts != 1 || d.FinishedAt.IsZero() {
		t.Fatalf("given-up delivery = %+v", d)
	}
	sub, _ = s.GetSubscription(ctx(t), "w1", "s1")
	if sub.Status != store.SubscriptionActive || sub.LastDeliveryOutcome != "delivered" {
		t.Fatalf("s1 after giving up an older attempt = %+v", sub)
	}

	// 410: the subscription is disabled with the reason "gone"; its other
	// deliveries are kept pending and not claimed while it is disabled.
	gone := bySub["s2"][0]
	must(t, s.FinishAttempt(ctx(t), "a", attempt(gone, at(3*time.Second), "http_410", 410),
		store.Next{Status: store.DeliveryFailed, DisableSubscription: true, Disabled: ev(audit.DeliveryDisabled)}))
	sub, err = s.GetSubscription(ctx(t), "w1", "s2")
	must(t, err)
	if sub.Status != store.SubscriptionDisabled || sub.DisabledReason != store.DisabledGone ||
		sub.LastDeliveryOutcome != "http_410" || !sub.LastDeliveryAt.Equal(at(3*time.Second)) {
		t.Fatalf("s2 after 410 = %+v", sub)
	}
	for _, id := range bySub["s2"][1:] {
		if d := getDelivery(t, s, id); d.Status != store.DeliveryPending || !d.FinishedAt.IsZero() {
			t.Fatalf("kept delivery of the disabled subscription = %+v", d)
		}
	}
	if got := claim(t, s, "c", at(time.Hour), 10); len(got) != 0 {
		t.Fatalf("claimed %q of a disabled subscription", deliveryIDs(got))
	}
	if ids := publish(t, s, "e-after", "w1", "receipt.created", at(time.Hour)); len(ids) != 1 {
		t.Fatalf("an event after the 410 got %d deliveries, want 1 (s1 only)", len(ids))
	}

	// Nonsense transitions are refused.
	for _, next := range []store.Next{
		{Status: store.DeliveryCanceled},
		{Status: store.DeliveryDelivered, DisableSubscription: true},
	} {
		if err := s.FinishAttempt(ctx(t), "a", attempt(ok, at(0), "x", 0), next); err == nil {
			t.Fatalf("FinishAttempt accepted %+v", next)
		}
	}
}

func testOutboxStatsAndPrune(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	if st := stats(t, s); st.Pending != 0 || !st.OldestPending.IsZero() {
		t.Fatalf("empty outbox stats = %+v", st)
	}
	subscribe(t, s, "s1", "w1", "receipt.created")
	publish(t, s, "unmatched", "w1", "user.delete", at(0))
	old := publish(t, s, "old", "w1", "receipt.created", at(time.Minute))
	mid := publish(t, s, "mid", "w1", "receipt.created", at(2*time.Minute))
	publish(t, s, "new", "w1", "receipt.created", at(3*time.Minute))
	if st := stats(t, s); st.Pending != 3 || !st.OldestPending.Equal(at(time.Minute)) {
		t.Fatalf("stats = %+v, want 3 pending, oldest at %v", st, at(time.Minute))
	}
	claim(t, s, "a", at(time.Hour), 10)
	must(t, s.FinishAttempt(ctx(t), "a", attempt(old[0], at(time.Hour), "delivered", 200), store.Next{Status: store.DeliveryDelivered}))
	must(t, s.FinishAttempt(ctx(t), "a", attempt(mid[0], at(time.Hour), "http_500", 500),
		store.Next{Status: store.DeliveryPending, RetryAt: at(2 * time.Hour)}))
	if st := stats(t, s); st.Pending != 2 || !st.OldestPending.Equal(at(2*time.Minute)) {
		t.Fatalf("stats after one delivery = %+v, want 2 pending, oldest at %v", st, at(2*time.Minute))
	}

	n, err := s.PruneOutbox(ctx(t), at(time.Hour))
	must(t, err)
	if n != 0 {
		t.Fatalf("pruned %d deliveries finished after the cut-off", n)
	}
	n, err = s.PruneOutbox(ctx(t), at(2*time.Hour))
	must(t, err)
	if n != 1 {
		t.Fatalf("pruned %d deliveries, want the delivered one", n)
	}
	_, err = s.GetDelivery(ctx(t), old[0])
	wantErr(t, err, store.ErrNotFound)
	if attempts, err := s.ListAttempts(ctx(t), old[0]); err != nil || len(attempts) != 0 {
		t.Fatalf("attempts of a pruned delivery: %v %v", attempts, err)
	}
	if d := getDelivery(t, s, mid[0]); d.Status != store.DeliveryPending {
		t.Fatalf("a pending delivery was pruned: %+v", d)
	}
	// The events are gone (their ids are free again); pending ones stay.
	for _, id := range []string{"old", "unmatched"} {
		if _, err := s.PublishEvent(ctx(t), store.Event{ID: id, WorkspaceID: "w1", Type: "user.delete", Data: []byte(`{}`), CreatedAt: at(0)}); err != nil {
			t.Fatalf("event %s was not pruned: %v", id, err)
		}
	}
	_, err = s.PublishEvent(ctx(t), store.Event{ID: "mid", WorkspaceID: "w1", Type: "user.delete", Data: []byte(`{}`), CreatedAt: at(0)})
	wantErr(t, err, store.ErrConflict)
}
