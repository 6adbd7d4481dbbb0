package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// disabled is the event of a subscription disabled by a 410.
var disabled = audit.Event{At: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), Action: audit.DeliveryDisabled, Outcome: audit.Success, Workspace: "w1"}

func TestNextValidate(t *testing.T) {
	tests := []struct {
		name string
		next Next
		ok   bool
	}{
		{"retry", Next{Status: DeliveryPending, RetryAt: time.Now()}, true},
		{"delivered", Next{Status: DeliveryDelivered}, true},
		{"failed", Next{Status: DeliveryFailed}, true},
		{"gone", Next{Status: DeliveryFailed, DisableSubscription: true, Disabled: disabled}, true},
		{"gone, unaudited", Next{Status: DeliveryFailed, DisableSubscription: true}, false},
		{"audited, not disabled", Next{Status: DeliveryFailed, Disabled: disabled}, false},
		{"canceled", Next{Status: DeliveryCanceled}, false},
		{"empty", Next{}, false},
		{"disable without failing", Next{Status: DeliveryPending, DisableSubscription: true}, false},
		{"failing period", Next{Status: DeliveryPending, RetryAt: time.Now(), FailingFor: time.Hour, Disabled: disabled}, true},
		{"failing period, unaudited", Next{Status: DeliveryPending, RetryAt: time.Now(), FailingFor: time.Hour}, false},
		{"negative failing period", Next{Status: DeliveryDelivered, FailingFor: -1, Disabled: disabled}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.next.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v", err)
			}
		})
	}
}

// fakeAttempts is an AttemptTx over one delivery, recording what was done.
type fakeAttempts struct {
	fakeAudit
	leased LeasedDelivery
	lost   bool
	number int
	update *DeliveryUpdate
	last   time.Time
	// failing is the subscription's failing-since; inactive says it is
	// disabled, reason why.
	failing   time.Time
	inactive  bool
	reason    string
	published []Event
}

func (f *fakeAttempts) LockLeased(context.Context, string, string) (LeasedDelivery, error) {
	if f.lost {
		return LeasedDelivery{}, ErrLeaseLost
	}
	return f.leased, nil
}

func (f *fakeAttempts) InsertAttempt(_ context.Context, _ Attempt, n int) error {
	f.number = n
	return nil
}

func (f *fakeAttempts) UpdateDelivery(_ context.Context, u DeliveryUpdate) error {
	f.update = &u
	return nil
}

func (f *fakeAttempts) NoteLastDelivery(_ context.Context, _ string, start time.Time, _ string) error {
	f.last = start
	return nil
}

func (f *fakeAttempts) NoteFailing(_ context.Context, _ string, start time.Time, failed bool) (time.Time, error) {
	switch {
	case !failed:
		f.failing = time.Time{}
	case f.failing.IsZero():
		f.failing = start
	}
	return f.failing, nil
}

func (f *fakeAttempts) DisableSubscription(_ context.Context, _, reason string) (bool, error) {
	if f.inactive {
		return false, nil
	}
	f.inactive, f.reason = true, reason
	return true, nil
}

func (f *fakeAttempts) Publish(_ context.Context, e Event) error {
	f.published = append(f.published, e)
	return nil
}

func TestFinish(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	due := start.Add(-time.Minute)
	end := start.Add(2 * time.Second)
	retry := start.Add(time.Hour)
	a := Attempt{DeliveryID: "d", StartedAt: start, Duration: 2 * time.Second, Outcome: "x"}
	tests := []struct {
		name     string
		next     Next
		lost     bool
		want     error
		update   DeliveryUpdate
		disabled bool
	}{
		{"retry", Next{Status: DeliveryPending, RetryAt: retry}, false, nil,
			DeliveryUpdate{ID: "d", Status: DeliveryPending, Attempts: 3, NextAttemptAt: retry, FinishedAt: end}, false},
		{"delivered", Next{Status: DeliveryDelivered}, false, nil,
			DeliveryUpdate{ID: "d", Status: DeliveryDelivered, Attempts: 3, NextAttemptAt: due, FinishedAt: end}, false},
		{"gone", Next{Status: DeliveryFailed, DisableSubscription: true, Disabled: disabled}, false, nil,
			DeliveryUpdate{ID: "d", Status: DeliveryFailed, Attempts: 3, NextAttemptAt: due, FinishedAt: end}, true},
		{"lease lost", Next{Status: DeliveryDelivered}, true, ErrLeaseLost, DeliveryUpdate{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := &fakeAttempts{leased: LeasedDelivery{SubscriptionID: "s", Attempts: 2, NextAttemptAt: due}, lost: tt.lost}
			err := Finish(context.Background(), tx, "owner", a, tt.next)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.want != nil {
				if tx.update != nil || tx.number != 0 {
					t.Fatal("a lost lease changed the delivery")
				}
				return
			}
			if tx.number != 3 || *tx.update != tt.update || !tx.last.Equal(start) || (tx.reason == DisabledGone) != tt.disabled {
				t.Fatalf("attempt %d, update %+v, last %v, disabled %q", tx.number, *tx.update, tx.last, tx.reason)
			}
			if got := tx.actions(); tt.disabled != (len(got) == 1 && got[0] == audit.DeliveryDisabled) || !tt.disabled && len(got) != 0 {
				t.Fatalf("audited %v", got)
			}
		})
	}
	t.Run("invalid next changes nothing", func(t *testing.T) {
		tx := &fakeAttempts{}
		if err := Finish(context.Background(), tx, "owner", a, Next{Status: DeliveryCanceled}); err == nil || tx.number != 0 {
			t.Fatalf("err = %v, attempt %d", err, tx.number)
		}
	})
}
