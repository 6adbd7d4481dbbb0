package fleet

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestBackends: each backend is current while its last heartbeat is
// within three intervals, and listed, with the time it leaves the view,
// until it has been silent for longer than the Service's bound.
func TestBackends(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	s := New(st, time.Hour)
	s.now = func() time.Time { return t0 }
	for _, b := range []store.FleetBackend{
		{ID: "b-now", Host: "h1", Version: "v1", Address: "10.0.0.1:8444", StartedAt: t0.Add(-time.Hour), LastSeen: t0},
		{ID: "b-15s", Host: "h2", Version: "v1", Address: "10.0.0.2:8444", StartedAt: t0.Add(-time.Hour), LastSeen: t0.Add(-15 * time.Second)},
		{ID: "b-16s", Host: "h3", Version: "v0", Address: "10.0.0.3:8444", StartedAt: t0.Add(-time.Hour), LastSeen: t0.Add(-16 * time.Second)},
		{ID: "b-1h", Host: "h4", Version: "v0", Address: "10.0.0.4:8444", StartedAt: t0.Add(-2 * time.Hour), LastSeen: t0.Add(-time.Hour)},
		{ID: "b-gone", Host: "h5", Version: "v0", Address: "10.0.0.5:8444", StartedAt: t0.Add(-2 * time.Hour), LastSeen: t0.Add(-time.Hour - time.Microsecond)},
	} {
		if err := st.BeatBackend(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Backends(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"b-now": true, "b-15s": true, "b-16s": false, "b-1h": false}
	if len(got) != len(want) {
		t.Fatalf("Backends = %+v", got)
	}
	for _, b := range got {
		current, ok := want[b.ID]
		if !ok || b.Current != current || b.Host == "" || b.Address == "" || b.StartedAt.IsZero() || !b.LeavesAt.Equal(b.LastSeen.Add(time.Hour)) {
			t.Errorf("%+v: current %v, want %v, leaving an hour after its last heartbeat", b, b.Current, current)
		}
	}
}

// TestEdges: each edge's lag is the key plane's newest number (1: the
// store's one key) less its applied one, never negative; it is current
// while its last report is within three intervals, and listed until it
// has been silent for longer than the Service's bound.
func TestEdges(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	s := New(st, time.Minute)
	s.now = func() time.Time { return t0 }
	for _, e := range []store.FleetEdge{
		{ID: "e-behind", Name: "edge-1", Serial: "1a", AppliedSeq: 0, LastContact: t0.Add(-time.Second), Source: "10.0.1.1"},
		{ID: "e-caught-up", Name: "edge-2", Serial: "2b", AppliedSeq: 1, LastContact: t0.Add(-20 * time.Second), Source: "10.0.1.2"},
		{ID: "e-restored", Name: "edge-3", Serial: "3c", AppliedSeq: 7, LastContact: t0, Source: "10.0.1.3"},
		{ID: "e-gone", Name: "edge-4", Serial: "4d", AppliedSeq: 1, LastContact: t0.Add(-61 * time.Second), Source: "10.0.1.4"},
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
		{ID: "e-behind", Name: "edge-1", Serial: "1a", AppliedSeq: 0, Lag: 1, LastContact: t0.Add(-time.Second), Source: "10.0.1.1", Current: true,
			LeavesAt: t0.Add(59 * time.Second)},
		{ID: "e-caught-up", Name: "edge-2", Serial: "2b", AppliedSeq: 1, Lag: 0, LastContact: t0.Add(-20 * time.Second), Source: "10.0.1.2", Current: false,
			LeavesAt: t0.Add(40 * time.Second)},
		{ID: "e-restored", Name: "edge-3", Serial: "3c", AppliedSeq: 7, Lag: 0, LastContact: t0, Source: "10.0.1.3", Current: true,
			LeavesAt: t0.Add(time.Minute)},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Edges = %+v, want %+v", got, want)
	}
}

// TestHeartbeat runs a heartbeat: its row appears at once, in place of
// the row of an earlier process at its host and address, and its last
// seen moves on at each beat; a row not seen within its bound is removed,
// and another backend's that was is kept.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []store.FleetBackend{
		{ID: "gone", Host: "h2", Address: "10.0.0.2:8444", StartedAt: t0, LastSeen: time.Now().Add(-time.Hour - time.Minute)},
		{ID: "killed", Host: host, Address: "127.0.0.1:8444", StartedAt: t0, LastSeen: time.Now()},
		{ID: "elsewhere", Host: host, Address: "127.0.0.1:9444", StartedAt: t0, LastSeen: time.Now()},
	} {
		if err := st.BeatBackend(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	h := NewHeartbeat(st, "127.0.0.1:8444", time.Hour, zap.NewNop())
	h.every = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	var first time.Time
	backends := func() map[string]store.FleetBackend {
		bs, err := st.ListBackends(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]store.FleetBackend{}
		for _, b := range bs {
			byID[b.ID] = b
		}
		return byID
	}
	testkit.Eventually(t, 10*time.Second, "the heartbeat's row, in place of the killed one's, and the old one gone", func() bool {
		bs := backends()
		self, ok := bs[h.ID()]
		_, other := bs["elsewhere"]
		first = self.LastSeen
		return len(bs) == 2 && ok && other && self.Address == "127.0.0.1:8444" && self.Host == host && strings.Contains(self.Version, "revision")
	})
	testkit.Eventually(t, 10*time.Second, "a later heartbeat", func() bool {
		bs := backends()
		return len(bs) == 2 && bs[h.ID()].LastSeen.After(first)
	})
}
