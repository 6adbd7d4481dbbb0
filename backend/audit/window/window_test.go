package window

import (
	"context"
	"net/netip"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// trail keeps what reaches it.
type trail struct {
	mu     sync.Mutex
	events []audit.Event
}

func (tr *trail) AppendAudit(_ context.Context, e audit.Event) (audit.Record, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.events = append(tr.events, e)
	return audit.Record{Event: e}, nil
}

func (tr *trail) all() []audit.Event {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]audit.Event(nil), tr.events...)
}

const (
	client  = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
	request = "7c6b5a49-3827-4160-9f5e-4d3c2b1a0f05"
	record  = "9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"
)

var (
	t0   = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	src1 = netip.MustParseAddr("203.0.113.1")
	src2 = netip.MustParseAddr("203.0.113.2")
)

func loginFailed(src netip.Addr) audit.Event {
	return audit.Event{At: t0, Action: audit.LoginFailed, Outcome: audit.Denied, Workspace: "w1", Client: client,
		Source: src, Request: request}
}

func retrieveDenied(src netip.Addr) audit.Event {
	return audit.Event{At: t0, Action: audit.RecordRetrieve, Outcome: audit.Denied, Workspace: "w1", Client: client,
		Source: src, Request: request, Entity: audit.Entity{Kind: audit.EntityCareContext, ID: record}}
}

func TestTrail(t *testing.T) {
	tests := []struct {
		name   string
		events []audit.Event // appended in the first minute
		// atOnce are the events recorded before the window ends; later, the
		// window's counts.
		atOnce, later []audit.Event
	}{
		{"one refusal", []audit.Event{loginFailed(src1)}, []audit.Event{loginFailed(src1)}, nil},
		{"repeated: the first, then the count",
			[]audit.Event{loginFailed(src1), loginFailed(src1), loginFailed(src1), loginFailed(src1)},
			[]audit.Event{loginFailed(src1)},
			[]audit.Event{func() audit.Event { e := loginFailed(src1); e.Request, e.Count = "", 3; return e }()}},
		{"one repeat: itself, late", []audit.Event{retrieveDenied(src1), retrieveDenied(src1)},
			[]audit.Event{retrieveDenied(src1)}, []audit.Event{retrieveDenied(src1)}},
		{"repeated retrievals lose what differs",
			[]audit.Event{retrieveDenied(src1), retrieveDenied(src1), retrieveDenied(src1)},
			[]audit.Event{retrieveDenied(src1)},
			[]audit.Event{func() audit.Event {
				e := retrieveDenied(src1)
				e.Request, e.Entity, e.Count = "", audit.Entity{}, 2
				return e
			}()}},
		{"another source at once", []audit.Event{loginFailed(src1), loginFailed(src2)},
			[]audit.Event{loginFailed(src1), loginFailed(src2)}, nil},
		{"another kind at once", []audit.Event{loginFailed(src1), retrieveDenied(src1)},
			[]audit.Event{loginFailed(src1), retrieveDenied(src1)}, nil},
		{"another actor at once", []audit.Event{loginFailed(src1), func() audit.Event { e := loginFailed(src1); e.Client = ""; return e }()},
			[]audit.Event{loginFailed(src1), func() audit.Event { e := loginFailed(src1); e.Client = ""; return e }()}, nil},
		{"successes pass", []audit.Event{
			{At: t0, Action: audit.Login, Outcome: audit.Success, Workspace: "w1", Client: client},
			{At: t0, Action: audit.Login, Outcome: audit.Success, Workspace: "w1", Client: client}},
			[]audit.Event{
				{At: t0, Action: audit.Login, Outcome: audit.Success, Workspace: "w1", Client: client},
				{At: t0, Action: audit.Login, Outcome: audit.Success, Workspace: "w1", Client: client}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trail{}
			clock := testkit.NewClock(t0)
			w := New(tr, time.Minute, zap.NewNop())
			w.now = clock.Now
			for _, e := range tt.events {
				if _, err := w.AppendAudit(t.Context(), e); err != nil {
					t.Fatal(err)
				}
			}
			wantEvents(t, "at once", tr.all(), tt.atOnce)
			clock.Advance(time.Minute)
			w.flush(t.Context(), clock.Now())
			wantEvents(t, "after the window", tr.all()[len(tt.atOnce):], tt.later)
		})
	}
}

// TestTrailNextWindow: a refusal after its window ended (before the ticker
// closed it) records the window's count, then itself, at once.
func TestTrailNextWindow(t *testing.T) {
	tr := &trail{}
	clock := testkit.NewClock(t0)
	w := New(tr, time.Minute, zap.NewNop())
	w.now = clock.Now
	for range 3 {
		_, _ = w.AppendAudit(t.Context(), loginFailed(src1))
	}
	clock.Advance(61 * time.Second)
	_, _ = w.AppendAudit(t.Context(), loginFailed(src1))
	counted := loginFailed(src1)
	counted.Request, counted.Count = "", 2
	wantEvents(t, "records", tr.all(), []audit.Event{loginFailed(src1), counted, loginFailed(src1)})
}

// TestTrailOff: with no window, every refusal is recorded.
func TestTrailOff(t *testing.T) {
	tr := &trail{}
	w := New(tr, 0, zap.NewNop())
	for range 3 {
		_, _ = w.AppendAudit(t.Context(), loginFailed(src1))
	}
	if n := len(tr.all()); n != 3 {
		t.Fatalf("%d records, want 3", n)
	}
}

// TestRunFlushesAtStop: a stopping process records the counts of the
// windows still open.
func TestRunFlushesAtStop(t *testing.T) {
	tr := &trail{}
	w := New(tr, time.Hour, zap.NewNop())
	for range 5 {
		_, _ = w.AppendAudit(t.Context(), loginFailed(src1))
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	cancel()
	<-done
	counted := loginFailed(src1)
	counted.Request, counted.Count = "", 4
	wantEvents(t, "records", tr.all(), []audit.Event{loginFailed(src1), counted})
}

func wantEvents(t *testing.T, what string, got, want []audit.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records %+v, want %d %+v", what, len(got), got, len(want), want)
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("%s: record %d = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}
