package planeclient

import (
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
)

func writes(perSecond float64) *contract.Limits {
	return &contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassWrites: {PerSecond: perSecond, Burst: 1}}}
}

// TestClientLimits: the limits the backend holds when the feed starts are
// loaded with it; a change naming a client reads its limits again (a set,
// a removal), also when made while the backend did not answer; a key's
// change beside it still applies.
func TestClientLimits(t *testing.T) {
	b, srv := newBackend(t)
	set(b, "k1", clientkey.Active)
	b.SetLimits("c1", writes(5))
	s, rec := newSource(t, srv, Config{Wait: 50 * time.Millisecond, Retry: 50 * time.Millisecond})
	running(t, s, rec)
	rate := func(client string) float64 {
		l, ok := s.ClientLimits(client)
		if !ok {
			return 0
		}
		return l.Rates[contract.ClassWrites].PerSecond
	}
	if got := rate("c1"); got != 5 {
		t.Fatalf("c1's limits at the start: %v, want 5 a second", got)
	}
	tests := []struct {
		name   string
		change func()
		client string
		want   float64
	}{
		{"a client's limits set", func() { b.SetLimits("c2", writes(7)) }, "c2", 7},
		{"a client's limits changed", func() { b.SetLimits("c1", writes(9)) }, "c1", 9},
		{"a client's limits removed", func() { b.SetLimits("c1", nil) }, "c1", 0},
		{"changed while the backend was down", func() {
			b.Down.Store(true)
			eventually(t, "the feed down", func() bool { up, _ := rec.feed(); return !up })
			b.SetLimits("c2", writes(3))
			set(b, "k1", clientkey.Retired)
			b.Down.Store(false)
		}, "c2", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change()
			eventually(t, "the change applied", func() bool { return rate(tt.client) == tt.want })
		})
	}
	if k, ok := lookup(s, "k1"); !ok || k.Usable() {
		t.Fatalf("k1, retired beside a limits change: %+v", k)
	}
}
