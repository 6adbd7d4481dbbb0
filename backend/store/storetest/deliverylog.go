package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// logFixture is a subscription s1 of w1 with five deliveries d[0..4],
// created a second apart: delivered, failed (a retry scheduled, its answer
// kept), given up, and two pending; w2 has a subscription s2.
func logFixture(t *testing.T, s Store) []string {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	subscribe(t, s, "s1", "w1", "receipt.created", "record.shared")
	subscribe(t, s, "s2", "w2", "receipt.created")
	var ids []string
	for i := range 5 {
		typ := []string{"receipt.created", "record.shared"}[i%2]
		ids = append(ids, publish(t, s, fmt.Sprint("e", i), "w1", typ, at(time.Duration(i)*time.Second))...)
	}
	claim(t, s, "a", at(time.Minute), 10)
	must(t, s.FinishAttempt(ctx(t), "a", attempt(ids[0], at(time.Minute), "delivered", 200), store.Next{Status: store.DeliveryDelivered}))
	a := attempt(ids[1], at(time.Minute), "http_503", 503)
	a.ResponseBody = "busy, try later"
	must(t, s.FinishAttempt(ctx(t), "a", a, store.Next{Status: store.DeliveryPending, RetryAt: at(time.Hour)}))
	must(t, s.FinishAttempt(ctx(t), "a", attempt(ids[2], at(time.Minute), "timeout", 0), store.Next{Status: store.DeliveryFailed}))
	return ids
}

// logIDs lists the deliveries f selects, failing on an error.
func logIDs(t *testing.T, s Store, f store.DeliveryFilter) []string {
	t.Helper()
	ds, err := s.ListDeliveries(ctx(t), f)
	must(t, err)
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.ID)
	}
	return ids
}

func testDeliveryLogFilters(t *testing.T, s Store) {
	d := logFixture(t, s)
	all := store.DeliveryFilter{WorkspaceID: "w1", SubscriptionID: "s1"}
	with := func(fn func(*store.DeliveryFilter)) store.DeliveryFilter { f := all; fn(&f); return f }
	for _, c := range []struct {
		name string
		f    store.DeliveryFilter
		want []string
	}{
		{"all, newest first", all, []string{d[4], d[3], d[2], d[1], d[0]}},
		{"delivered", with(func(f *store.DeliveryFilter) { f.Status = store.DeliveryLogDelivered }), []string{d[0]}},
		{"failed", with(func(f *store.DeliveryFilter) { f.Status = store.DeliveryLogFailed }), []string{d[1]}},
		{"given up", with(func(f *store.DeliveryFilter) { f.Status = store.DeliveryLogGivenUp }), []string{d[2]}},
		{"pending", with(func(f *store.DeliveryFilter) { f.Status = store.DeliveryLogPending }), []string{d[4], d[3]}},
		{"event type", with(func(f *store.DeliveryFilter) { f.EventType = "record.shared" }), []string{d[3], d[1]}},
		{"since and until", with(func(f *store.DeliveryFilter) { f.Since, f.Until = at(time.Second), at(3*time.Second) }), []string{d[2], d[1]}},
		{"another workspace's subscription", store.DeliveryFilter{WorkspaceID: "w2", SubscriptionID: "s2"}, nil},
	} {
		if got := logIDs(t, s, c.f); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	_, err := s.ListDeliveries(ctx(t), store.DeliveryFilter{WorkspaceID: "w2", SubscriptionID: "s1"})
	wantErr(t, err, store.ErrNotFound)

	ds, err := s.ListDeliveries(ctx(t), all)
	must(t, err)
	want := []store.DeliveryLogStatus{store.DeliveryLogPending, store.DeliveryLogPending, store.DeliveryLogGivenUp, store.DeliveryLogFailed, store.DeliveryLogDelivered}
	for i, l := range ds {
		if l.Status != want[i] || l.SubscriptionID != "s1" || l.EventID != fmt.Sprint("e", 4-i) || !l.CreatedAt.Equal(at(time.Duration(4-i)*time.Second)) {
			t.Errorf("delivery %d = %+v", i, l)
		}
	}
	if ds[4].DeliveredAt.IsZero() || !ds[4].NextAttemptAt.IsZero() || ds[4].Attempts != 1 || ds[4].LastOutcome != "delivered" {
		t.Errorf("delivered = %+v", ds[4])
	}
	if !ds[3].NextAttemptAt.Equal(at(time.Hour)) || ds[3].LastOutcome != "http_503" || !ds[3].DeliveredAt.IsZero() {
		t.Errorf("failed = %+v", ds[3])
	}
}

func testDeliveryLogPages(t *testing.T, s Store) {
	d := logFixture(t, s)
	var got []string
	f := store.DeliveryFilter{WorkspaceID: "w1", SubscriptionID: "s1", Limit: 2}
	for range 10 {
		ds, err := s.ListDeliveries(ctx(t), f)
		must(t, err)
		for _, l := range ds {
			got = append(got, l.ID)
		}
		if len(ds) < f.Limit {
			break
		}
		f.Before = store.Cursor{CreatedAt: ds[len(ds)-1].CreatedAt, ID: ds[len(ds)-1].ID}
	}
	if want := []string{d[4], d[3], d[2], d[1], d[0]}; !slices.Equal(got, want) {
		t.Fatalf("pages = %q, want %q", got, want)
	}
}

func testDeliveryLogAttempts(t *testing.T, s Store) {
	d := logFixture(t, s)
	l, as, err := s.DeliveryAttempts(ctx(t), "w1", "s1", d[1])
	must(t, err)
	if l.ID != d[1] || l.Status != store.DeliveryLogFailed || len(as) != 1 || as[0].ResponseBody != "busy, try later" || as[0].StatusCode != 503 {
		t.Fatalf("delivery %+v, attempts %+v", l, as)
	}
	for _, c := range [][3]string{{"w2", "s1", d[1]}, {"w2", "s2", d[1]}, {"w1", "s1", "nope"}} {
		_, _, err := s.DeliveryAttempts(ctx(t), c[0], c[1], c[2])
		wantErr(t, err, store.ErrNotFound)
		_, err = s.Redeliver(ctx(t), c[0], c[1], c[2], atEvent(audit.DeliveryRedeliver, at(time.Hour)))
		wantErr(t, err, store.ErrNotFound)
	}
	_, err = s.RecoverDeliveries(ctx(t), "w2", "s1", at(0), atEvent(audit.DeliveryRecover, at(time.Hour)))
	wantErr(t, err, store.ErrNotFound)
}

func testDeliveryLogRedeliver(t *testing.T, s Store) {
	d := logFixture(t, s)
	now := at(2 * time.Minute)
	trail := listAudit(t, s, store.AuditFilter{Workspace: "w1"})
	before := fmt.Sprint(getDelivery(t, s, d[0]), getDelivery(t, s, d[1]), getDelivery(t, s, d[2]))
	_, err := s.Redeliver(ctx(t), "w1", "s1", d[0], unrecordable(atEvent(audit.DeliveryRedeliver, now)))
	wantAppendFailed(t, err)
	_, err = s.RecoverDeliveries(ctx(t), "w1", "s1", at(time.Second), unrecordable(atEvent(audit.DeliveryRecover, now)))
	wantAppendFailed(t, err)
	if after := fmt.Sprint(getDelivery(t, s, d[0]), getDelivery(t, s, d[1]), getDelivery(t, s, d[2])); after != before {
		t.Fatalf("a redelivery or recovery whose record failed changed the deliveries:\n%s\nwas\n%s", after, before)
	}
	l, err := s.Redeliver(ctx(t), "w1", "s1", d[0], atEvent(audit.DeliveryRedeliver, now))
	must(t, err)
	if l.Status != store.DeliveryLogPending || !l.NextAttemptAt.Equal(now) || l.Attempts != 1 || !l.DeliveredAt.IsZero() {
		t.Fatalf("redelivered = %+v", l)
	}
	// Recovery takes the failed and the given-up ones since d[1], in
	// creation order; the log shows them pending until their next
	// attempt, and a second recovery finds none.
	n, err := s.RecoverDeliveries(ctx(t), "w1", "s1", at(time.Second), atEvent(audit.DeliveryRecover, now))
	must(t, err)
	if n != 2 {
		t.Fatalf("recovered %d, want 2", n)
	}
	all := store.DeliveryFilter{WorkspaceID: "w1", SubscriptionID: "s1"}
	for _, id := range d[:3] {
		if l, _, err := s.DeliveryAttempts(ctx(t), "w1", "s1", id); err != nil || l.Status != store.DeliveryLogPending {
			t.Fatalf("%s made due again reads %q (%v), want pending", id, l.Status, err)
		}
	}
	all.Status = store.DeliveryLogPending
	if got := logIDs(t, s, all); !slices.Equal(got, []string{d[4], d[3], d[2], d[1], d[0]}) {
		t.Fatalf("pending after the recovery: %q", got)
	}
	if n, err := s.RecoverDeliveries(ctx(t), "w1", "s1", at(time.Second), atEvent(audit.DeliveryRecover, now)); err != nil || n != 0 {
		t.Fatalf("recovered again: %d, %v; want none", n, err)
	}
	wantTrail(t, s, "w1", trail[len(trail)-1].Seq, audit.DeliveryRedeliver, audit.DeliveryRecover, audit.DeliveryRecover)
	// (d[3] and d[4], claimed by a, are claimed again: a's lease expired.)
	got := claim(t, s, "b", now.Add(time.Microsecond), 10)
	if ids := deliveryIDs(got); !slices.Equal(ids, sorted(d)) {
		t.Fatalf("claimed %q after recovery", ids)
	}
	first, second := getDelivery(t, s, d[1]), getDelivery(t, s, d[2])
	if !first.NextAttemptAt.Before(second.NextAttemptAt) || second.Attempts != 1 {
		t.Fatalf("recovered out of order: %+v %+v", first, second)
	}
	// The next attempt continues the count.
	must(t, s.FinishAttempt(ctx(t), "b", attempt(d[2], now, "delivered", 200), store.Next{Status: store.DeliveryDelivered}))
	_, as, err := s.DeliveryAttempts(ctx(t), "w1", "s1", d[2])
	must(t, err)
	if len(as) != 2 || as[1].Number != 2 {
		t.Fatalf("attempts after recovery = %+v", as)
	}
}

// atEvent is w1's event of action at t.
func atEvent(action audit.Action, t time.Time) audit.Event {
	e := ev(action)
	e.At = t
	return e
}

// AnswersDropped checks an engine's schema version 23: the answers of
// receivers an earlier version kept (store.Attempt.ResponseBody), of which
// no one can tell any more whether a private receiver gave them, are
// dropped when the store is upgraded, and their attempts kept. s is a
// fresh store; upgrade forgets that version 23 ran and returns the store
// opened again, which runs it.
func AnswersDropped(t *testing.T, s Store, upgrade func() Store) {
	d := logFixture(t, s)
	if _, as, err := s.DeliveryAttempts(ctx(t), "w1", "s1", d[1]); err != nil || len(as) != 1 || as[0].ResponseBody == "" {
		t.Fatalf("the fixture's kept answer: %+v, %v", as, err)
	}
	s = upgrade()
	_, as, err := s.DeliveryAttempts(ctx(t), "w1", "s1", d[1])
	if err != nil || len(as) != 1 || as[0].ResponseBody != "" || as[0].StatusCode != 503 || as[0].Outcome != "http_503" {
		t.Fatalf("after the upgrade, the attempt is %+v (%v); want its status and outcome, without its answer", as, err)
	}
}
