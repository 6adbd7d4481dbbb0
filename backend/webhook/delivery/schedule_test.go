package delivery

import (
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

func TestBackoff(t *testing.T) {
	s := Schedule{Base: 10 * time.Second, Max: 2 * time.Hour, Horizon: 72 * time.Hour}
	tests := []struct {
		name string
		n    int
		want time.Duration
	}{
		{"first attempt", 1, 10 * time.Second},
		{"second attempt", 2, 20 * time.Second},
		{"third attempt", 3, 40 * time.Second},
		{"last below max", 10, 5120 * time.Second},
		{"capped at max", 11, 2 * time.Hour},
		{"no overflow", 1000, 2 * time.Hour}, // no overflow
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.backoff(tt.n); got != tt.want {
				t.Errorf("backoff(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
	for range 1000 {
		if d := jitter(time.Minute); d < 30*time.Second || d > time.Minute {
			t.Fatalf("jitter(1m) = %v, outside [30s, 1m]", d)
		}
	}
}

func TestScheduleNext(t *testing.T) {
	s := Schedule{Base: 10 * time.Second, Max: time.Hour, Horizon: 24 * time.Hour}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		n          int // the attempt's number
		r          Result
		started    time.Time
		now        time.Time // zero: started
		status     store.DeliveryStatus
		disable    bool
		earliest   time.Duration // RetryAt - now, inclusive bounds
		latest     time.Duration
		atDeadline bool
	}{
		{name: "delivered", n: 1, r: Result{Delivered: true}, status: store.DeliveryDelivered},
		{name: "410 disables", n: 3, r: Result{Gone: true, StatusCode: 410}, status: store.DeliveryFailed, disable: true},
		{name: "refused address gives up at once", n: 1, r: Result{Permanent: true}, status: store.DeliveryFailed},
		{name: "first failure", n: 1, r: Result{StatusCode: 500}, status: store.DeliveryPending,
			earliest: 5 * time.Second, latest: 10 * time.Second},
		{name: "third failure", n: 3, r: Result{StatusCode: 503}, status: store.DeliveryPending,
			earliest: 20 * time.Second, latest: 40 * time.Second},
		{name: "longer Retry-After wins", n: 1, r: Result{StatusCode: 429, RetryAfter: 5 * time.Minute},
			status: store.DeliveryPending, earliest: 5 * time.Minute, latest: 5 * time.Minute},
		{name: "shorter Retry-After loses", n: 3, r: Result{StatusCode: 429, RetryAfter: time.Second},
			status: store.DeliveryPending, earliest: 20 * time.Second, latest: 40 * time.Second},
		{name: "Retry-After capped at max", n: 1, r: Result{StatusCode: 503, RetryAfter: 30 * 24 * time.Hour},
			status: store.DeliveryPending, earliest: time.Hour, latest: time.Hour},
		{name: "last retry at the horizon", n: 20, r: Result{Outcome: "timeout"}, started: created.Add(23*time.Hour + 59*time.Minute),
			status: store.DeliveryPending, atDeadline: true},
		{name: "started before the horizon, ended after", n: 20, r: Result{Outcome: "timeout"},
			started: created.Add(24*time.Hour - time.Second), now: created.Add(24*time.Hour + 14*time.Second),
			status: store.DeliveryPending, atDeadline: true},
		{name: "give up at the horizon", n: 21, r: Result{Outcome: "timeout"}, started: created.Add(24 * time.Hour), status: store.DeliveryFailed},
		{name: "give up past the horizon", n: 21, r: Result{StatusCode: 500}, started: created.Add(25 * time.Hour), status: store.DeliveryFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.started.IsZero() {
				tt.started = created
			}
			if tt.now.IsZero() {
				tt.now = tt.started
			}
			next := s.Next(store.Delivery{CreatedAt: created, Attempts: tt.n - 1}, tt.r, tt.started, tt.now)
			if next.Status != tt.status || next.DisableSubscription != tt.disable {
				t.Errorf("%s: next = %+v, want status %s, disable %v", tt.name, next, tt.status, tt.disable)
				return
			}
			if tt.status != store.DeliveryPending {
				if !next.RetryAt.IsZero() {
					t.Errorf("%s: a finished delivery has a retry time", tt.name)
				}
				return
			}
			if tt.atDeadline {
				if !next.RetryAt.Equal(created.Add(s.Horizon)) {
					t.Errorf("%s: retry at %v, want the horizon %v", tt.name, next.RetryAt, created.Add(s.Horizon))
				}
				return
			}
			if delay := next.RetryAt.Sub(tt.now); delay < tt.earliest || delay > tt.latest {
				t.Errorf("%s: retry after %v, want within [%v, %v]", tt.name, delay, tt.earliest, tt.latest)
			}
		})
	}
}
