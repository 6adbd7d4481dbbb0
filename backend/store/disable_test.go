package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// TestFailingSince: the first failed attempt since the last success sets
// failing-since, later failures keep it, a success clears it; a failure
// ending the period after it disables the subscription with the reason
// "failing", audits it and publishes the notice, once.
func TestFailingSince(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	period := 5 * 24 * time.Hour
	steps := []struct {
		at          time.Duration // the attempt's start after t0
		delivered   bool
		wantFailing time.Duration // -1: cleared
		wantReason  string
	}{
		{0, false, 0, ""},
		{time.Hour, false, 0, ""},
		{2 * time.Hour, true, -1, ""},
		{3 * time.Hour, false, 3 * time.Hour, ""},
		{3*time.Hour + period - 2*time.Second, false, 3 * time.Hour, ""},            // ends a second short
		{3*time.Hour + period - time.Second, false, 3 * time.Hour, DisabledFailing}, // ends at the period
		{3*time.Hour + period + time.Hour, false, 3 * time.Hour, DisabledFailing},   // already disabled: no second notice
	}
	tx := &fakeAttempts{leased: LeasedDelivery{SubscriptionID: "s"}}
	for i, s := range steps {
		start := t0.Add(s.at)
		a := Attempt{DeliveryID: "d", StartedAt: start, Duration: time.Second, Outcome: "http_503"}
		var reported string
		next := Next{Status: DeliveryPending, RetryAt: start.Add(time.Minute), FailingFor: period, Disabled: disabled,
			Notice: Event{ID: "n", WorkspaceID: "w1", Type: EventSubscriptionDisabled, CreatedAt: start}, Reported: &reported}
		if s.delivered {
			next.Status, next.RetryAt, a.Outcome = DeliveryDelivered, time.Time{}, "delivered"
		}
		if err := Finish(context.Background(), tx, "owner", a, next); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		want := time.Time{}
		if s.wantFailing >= 0 {
			want = t0.Add(s.wantFailing)
		}
		if !tx.failing.Equal(want) || tx.reason != s.wantReason {
			t.Fatalf("step %d: failing since %v, reason %q; want %v, %q", i, tx.failing, tx.reason, want, s.wantReason)
		}
		if first := s.wantReason != "" && (i == 0 || steps[i-1].wantReason == ""); (reported != "") != first {
			t.Fatalf("step %d: reported %q", i, reported)
		}
	}
	if got := tx.actions(); len(got) != 1 || got[0] != audit.DeliveryDisabled || tx.appended[0].Reason != DisabledFailing {
		t.Fatalf("audited %v", got)
	}
	if len(tx.published) != 1 {
		t.Fatalf("published %d notices", len(tx.published))
	}
	var data DisabledData
	if err := json.Unmarshal(tx.published[0].Data, &data); err != nil || data.Reason != DisabledFailing ||
		data.SubscriptionID != "s" || data.FailingSince == nil || !data.FailingSince.Equal(t0.Add(3*time.Hour)) {
		t.Fatalf("notice %s (%v)", tx.published[0].Data, err)
	}
}

// TestGoneUnchanged: a 410 disables at once, whatever the period, with
// the reason "gone".
func TestGoneUnchanged(t *testing.T) {
	t.Parallel()
	tx := &fakeAttempts{leased: LeasedDelivery{SubscriptionID: "s"}}
	a := Attempt{DeliveryID: "d", StartedAt: time.Now(), Outcome: "http_410", StatusCode: 410}
	next := Next{Status: DeliveryFailed, DisableSubscription: true, FailingFor: time.Hour, Disabled: disabled}
	if err := Finish(context.Background(), tx, "owner", a, next); err != nil {
		t.Fatal(err)
	}
	if tx.reason != DisabledGone || tx.appended[0].Reason != DisabledGone || len(tx.published) != 0 {
		t.Fatalf("reason %q, audited %+v, published %d", tx.reason, tx.appended, len(tx.published))
	}
}
