package fleet

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestBackends: each backend is current while its last heartbeat is
// within three intervals.
func TestBackends(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	s := New(st)
	s.now = func() time.Time { return t0 }
	for _, b := range []store.FleetBackend{
		{ID: "b-now", Host: "h1", Version: "v1", Address: "10.0.0.1:8444", StartedAt: t0.Add(-time.Hour), LastSeen: t0},
		{ID: "b-15s", Host: "h2", Version: "v1", Address: "10.0.0.2:8444", StartedAt: t0.Add(-time.Hour), LastSeen: t0.Add(-15 * time.Second)},
		{ID: "b-16s", Host: "h3", Version: "v0", Address: "10.0.0.3:8444", StartedAt: t0.Add(-time.Hour), LastSeen: t0.Add(-16 * time.Second)},
	} {
		if err := st.BeatBackend(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Backends(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"b-now": true, "b-15s": true, "b-16s": false}
	if len(got) != len(want) {
		t.Fatalf("Backends = %+v", got)
	}
	for _, b := range got {
		if b.Current != want[b.ID] || b.Host == "" || b.Address == "" || b.StartedAt.IsZero() {
			t.Errorf("%+v: current %v, want %v", b, b.Current, want[b.ID])
		}
	}
}

// TestEdges: each edge's lag is the key plane's newest number (1: the
// store's one key) less its applied one, never negative, and it is current
// while its last report is within three intervals.
func TestEdges(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	s := New(st)
	s.now = func() time.Time { return t0 }
	for _, e := range []store.FleetEdge{
		{ID: "e-behind", Name: "edge-1", Serial: "1a", AppliedSeq: 0, LastContact: t0.Add(-time.Second), Source: "10.0.1.1"},
		{ID: "e-caught-up", Name: "edge-2", Serial: "2b", AppliedSeq: 1, LastContact: t0.Add(-20 * time.Second), Source: "10.0.1.2"},
		{ID: "e-restored", Name: "edge-3", Serial: "3c", AppliedSeq: 7, LastContact: t0, Source: "10.0.1.3"},
	} {
		if err := st.ReportEdge(t.Context(), e, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Edges(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []Edge{
		{ID: "e-behind", Name: "edge-1", Serial: "1a", AppliedSeq: 0, Lag: 1, LastContact: t0.Add(-time.Second), Source: "10.0.1.1", Current: true},
		{ID: "e-caught-up", Name: "edge-2", Serial: "2b", AppliedSeq: 1, Lag: 0, LastContact: t0.Add(-20 * time.Second), Source: "10.0.1.2", Current: false},
		{ID: "e-restored", Name: "edge-3", Serial: "3c", AppliedSeq: 7, Lag: 0, LastContact: t0, Source: "10.0.1.3", Current: true},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Edges = %+v, want %+v", got, want)
	}
}

// TestHeartbeat runs a heartbeat: its row appears at once and its last
// seen moves on at each beat; a row not seen for a day is removed.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	if err := st.BeatBackend(t.Context(), store.FleetBackend{ID: "gone", StartedAt: t0, LastSeen: time.Now().Add(-ForgetAfter - time.Minute)}); err != nil {
		t.Fatal(err)
	}
	h := NewHeartbeat(st, "127.0.0.1:8444", zap.NewNop())
	h.every = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	var first time.Time
	testkit.Eventually(t, 10*time.Second, "the heartbeat's row, and the old one gone", func() bool {
		bs, err := st.ListBackends(t.Context())
		if err != nil || len(bs) != 1 || bs[0].ID != h.ID() {
			return false
		}
		first = bs[0].LastSeen
		return bs[0].Address == "127.0.0.1:8444" && bs[0].Host != "" && strings.Contains(bs[0].Version, "revision")
	})
	testkit.Eventually(t, 10*time.Second, "a later heartbeat", func() bool {
		bs, err := st.ListBackends(t.Context())
		return err == nil && len(bs) == 1 && bs[0].LastSeen.After(first)
	})
}
