package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// hour is the disable period of the tests.
const hour = time.Hour

// failingNext is the decision after a failed attempt at t of a delivery
// retried at retry, which disables its subscription after an hour of
// failures and reports why into reported.
func failingNext(t time.Time, retry time.Time, reported *string) store.Next {
	return store.Next{Status: store.DeliveryPending, RetryAt: retry, FailingFor: hour, Disabled: ev(audit.DeliveryDisabled),
		Notice:   store.Event{ID: "notice-" + t.Format("150405.000000"), WorkspaceID: "w1", Type: store.EventSubscriptionDisabled, CreatedAt: t},
		Reported: reported}
}

func getSub(t *testing.T, s Store, ws, id string) store.Subscription {
	t.Helper()
	sub, err := s.GetSubscription(ctx(t), ws, id)
	must(t, err)
	return sub
}

// testSubscriptionDisable: failing-since is the first failure since the
// last success; a failure an hour after it disables the subscription
// ("failing"), keeps its pending deliveries unclaimed and publishes
// subscription.disabled to the workspace's other subscriptions that ask
// for it (not to another workspace's).
func testSubscriptionDisable(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	subscribe(t, s, "s1", "w1", "receipt.created")
	subscribe(t, s, "s2", "w1", store.EventSubscriptionDisabled)
	subscribe(t, s, "s3", "w2", store.EventSubscriptionDisabled)
	e0 := publish(t, s, "e0", "w1", "receipt.created", at(0))[0]
	claim(t, s, "a", at(time.Second), 10)
	var reported string
	must(t, s.FinishAttempt(ctx(t), "a", attempt(e0, at(time.Second), "http_503", 503), failingNext(at(time.Second), at(2*time.Minute), &reported)))
	if sub := getSub(t, s, "w1", "s1"); !sub.FailingSince.Equal(at(time.Second)) || sub.Status != store.SubscriptionActive {
		t.Fatalf("after a failure: %+v", sub)
	}
	e1 := publish(t, s, "e1", "w1", "receipt.created", at(time.Minute))[0]
	claim(t, s, "a", at(2*time.Minute), 10)
	must(t, s.FinishAttempt(ctx(t), "a", attempt(e0, at(2*time.Minute), "delivered", 200), store.Next{Status: store.DeliveryDelivered, FailingFor: hour, Disabled: ev(audit.DeliveryDisabled)}))
	if sub := getSub(t, s, "w1", "s1"); !sub.FailingSince.IsZero() {
		t.Fatalf("a success left failing since %v", sub.FailingSince)
	}
	must(t, s.FinishAttempt(ctx(t), "a", attempt(e1, at(3*time.Minute), "timeout", 0), failingNext(at(3*time.Minute), at(hour+3*time.Minute), &reported)))
	if sub := getSub(t, s, "w1", "s1"); !sub.FailingSince.Equal(at(3*time.Minute)) || reported != "" {
		t.Fatalf("after a failure following a success: %+v, reported %q", sub, reported)
	}
	claim(t, s, "a", at(hour+3*time.Minute), 10)
	// The attempt started at the period's end minus its duration ends at it.
	must(t, s.FinishAttempt(ctx(t), "a", attempt(e1, at(hour+3*time.Minute-250*time.Millisecond), "timeout", 0),
		failingNext(at(hour+3*time.Minute), at(2*hour), &reported)))
	sub := getSub(t, s, "w1", "s1")
	if sub.Status != store.SubscriptionDisabled || sub.DisabledReason != store.DisabledFailing || reported != store.DisabledFailing {
		t.Fatalf("after an hour of failures: %+v, reported %q", sub, reported)
	}
	if d := getDelivery(t, s, e1); d.Status != store.DeliveryPending {
		t.Fatalf("the failing delivery was not kept: %+v", d)
	}
	// Kept is not waiting: the outbox's backlog leaves it out.
	if st := stats(t, s); st.Pending != 1 || !st.OldestPending.Equal(at(hour+3*time.Minute)) {
		t.Fatalf("stats with a disabled subscription's delivery kept = %+v, want the notice only", st)
	}
	got := claim(t, s, "b", at(3*hour), 10)
	if len(got) != 1 || got[0].Subscription.ID != "s2" || got[0].Event.Type != store.EventSubscriptionDisabled {
		t.Fatalf("claimed after the disabling: %+v", got)
	}
	var data store.DisabledData
	if err := json.Unmarshal(got[0].Event.Data, &data); err != nil || data.SubscriptionID != "s1" || data.Reason != store.DisabledFailing ||
		data.FailingSince == nil || !data.FailingSince.Equal(at(3*time.Minute)) {
		t.Fatalf("notice %s: %v", got[0].Event.Data, err)
	}
}

// testSubscriptionEnable: a client's PATCH turns a subscription off
// ("client") and on again, which makes its kept deliveries due at once;
// another workspace's id is not found.
func testSubscriptionEnable(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	subscribe(t, s, "s1", "w1", "receipt.created")
	off := store.Enablement{At: at(time.Minute), Event: ev(audit.SubscriptionDisable)}
	_, err := s.SetSubscriptionEnabled(ctx(t), "w2", "s1", off)
	wantErr(t, err, store.ErrNotFound)
	sub, err := s.SetSubscriptionEnabled(ctx(t), "w1", "s1", off)
	must(t, err)
	if sub.Status != store.SubscriptionDisabled || sub.DisabledReason != store.DisabledByClient {
		t.Fatalf("disabled by its client: %+v", sub)
	}
	kept := publish(t, s, "kept", "w1", "receipt.created", at(0))
	if len(kept) != 0 {
		t.Fatalf("a disabled subscription got %d deliveries", len(kept))
	}
	_, err = s.SetSubscriptionEnabled(ctx(t), "w1", "s1", store.Enablement{Enabled: true, At: at(time.Minute), Event: ev(audit.SubscriptionEnable)})
	must(t, err)
	ids := publish(t, s, "e1", "w1", "receipt.created", at(0))
	claim(t, s, "a", at(time.Second), 10)
	must(t, s.FinishAttempt(ctx(t), "a", attempt(ids[0], at(time.Second), "http_503", 503), store.Next{Status: store.DeliveryPending, RetryAt: at(24 * hour)}))
	_, err = s.SetSubscriptionEnabled(ctx(t), "w1", "s1", off)
	must(t, err)
	if got := claim(t, s, "b", at(48*hour), 10); len(got) != 0 {
		t.Fatalf("claimed %q of a disabled subscription", deliveryIDs(got))
	}
	on := store.Enablement{Enabled: true, At: at(2 * hour), Event: ev(audit.SubscriptionEnable)}
	if sub, err = s.SetSubscriptionEnabled(ctx(t), "w1", "s1", on); err != nil || sub.Status != store.SubscriptionActive || sub.DisabledReason != "" {
		t.Fatalf("enabled: %+v, %v", sub, err)
	}
	if got := claim(t, s, "b", at(2*hour), 10); len(got) != 1 || got[0].ID != ids[0] {
		t.Fatalf("claimed %+v once enabled, want the kept delivery due now", got)
	}
}

// testAttemptRetention: PruneAttempts removes the attempts started before
// its bound, and only them; PruneOutbox removes the kept deliveries of a
// disabled subscription created before its bound.
func testAttemptRetention(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	subscribe(t, s, "s1", "w1", "receipt.created")
	ids := publish(t, s, "e1", "w1", "receipt.created", at(0))
	for i, start := range []time.Duration{time.Minute, time.Hour, 2 * time.Hour} {
		claim(t, s, "a", at(start), 10)
		must(t, s.FinishAttempt(ctx(t), "a", attempt(ids[0], at(start), "http_503", 503),
			store.Next{Status: store.DeliveryPending, RetryAt: at(start + time.Minute*time.Duration(i+1))}))
	}
	n, err := s.PruneAttempts(ctx(t), at(time.Hour))
	must(t, err)
	attempts, err := s.ListAttempts(ctx(t), ids[0])
	must(t, err)
	if n != 1 || len(attempts) != 2 || !attempts[0].StartedAt.Equal(at(time.Hour)) {
		t.Fatalf("pruned %d, left %+v", n, attempts)
	}
	if d := getDelivery(t, s, ids[0]); d.Attempts != 3 {
		t.Fatalf("pruning attempts changed the delivery's count: %d", d.Attempts)
	}
	_, err = s.SetSubscriptionEnabled(ctx(t), "w1", "s1", store.Enablement{At: at(3 * hour), Event: ev(audit.SubscriptionDisable)})
	must(t, err)
	if n, err := s.PruneOutbox(ctx(t), at(0)); err != nil || n != 0 {
		t.Fatalf("pruned %d kept deliveries created at the bound (%v)", n, err)
	}
	if n, err := s.PruneOutbox(ctx(t), at(time.Second)); err != nil || n != 1 {
		t.Fatalf("pruned %d kept deliveries past the retention, want 1 (%v)", n, err)
	}
}
