// Package window keeps strangers from filling the audit trail with
// refusals. A refusal (an event whose outcome is audit.Denied: a failed
// login, a retrieval of a record the workspace does not have) is recorded
// at once when it opens a window for its kind, source and actor; the
// refusals of that kind, from that source and actor, until the window
// ends are counted, and recorded as one event (audit.Event.Count) when it
// ends. So the first refusal is in the trail at once and nothing is
// hidden, yet a flood of them costs the trail two records per window per
// source. Every other event passes straight through.
//
// Windows are kept in memory, one set per process: with several backends,
// each counts what it serves. A process that stops records its open
// counts first (Run).
package window

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// Default is how long a window lasts unless configured.
const Default = time.Minute

// maxOpen bounds the windows open at once; past it, refusals are recorded
// one by one again, which costs the trail, not the process's memory.
const maxOpen = 100_000

// flushTimeout bounds the appends of the counts a stopping process
// records.
const flushTimeout = 10 * time.Second

// Trail stands before the audit trail (next) and decides which refusals
// reach it (see the package doc). It is a store.AuditAppender.
type Trail struct {
	next   store.AuditAppender
	window time.Duration
	now    func() time.Time
	log    *zap.Logger

	mu   sync.Mutex
	open map[key]*tally
}

// key is a refusal's kind, source and actor.
type key struct {
	workspace     string
	action        audit.Action
	client, grant string
	source        netip.Addr
}

// tally is an open window: when it ends, and the refusals it counted
// after its first.
type tally struct {
	until time.Time
	count int64
	last  audit.Event
}

// New returns a Trail in front of next with windows of window; 0 records
// every refusal.
func New(next store.AuditAppender, window time.Duration, log *zap.Logger) *Trail {
	return &Trail{next: next, window: window, now: time.Now, log: log, open: map[key]*tally{}}
}

// AppendAudit appends e, unless it is a refusal of a window that is open,
// which it counts (and then returns the zero Record).
func (t *Trail) AppendAudit(ctx context.Context, e audit.Event) (audit.Record, error) {
	if e.Outcome != audit.Denied || t.window <= 0 {
		return t.next.AppendAudit(ctx, e)
	}
	k := key{workspace: e.Workspace, action: e.Action, client: e.Client, grant: e.Grant, source: e.Source}
	now := t.now()
	t.mu.Lock()
	ended, counted := t.open[k]
	switch {
	case counted && now.Before(ended.until):
		ended.count++
		ended.last = e
		t.mu.Unlock()
		return audit.Record{}, nil
	case counted:
		delete(t.open, k)
	default:
		ended = nil
	}
	if len(t.open) < maxOpen {
		t.open[k] = &tally{until: now.Add(t.window)}
	}
	t.mu.Unlock()
	if ended != nil {
		t.record(ctx, ended)
	}
	return t.next.AppendAudit(ctx, e)
}

// Run records the counts of the windows that end, until ctx is done, and
// then those of every window still open.
func (t *Trail) Run(ctx context.Context) {
	if t.window <= 0 {
		return
	}
	tick := time.NewTicker(max(t.window/4, 100*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
			t.flush(flush, time.Time{})
			cancel()
			return
		case <-tick.C:
			t.flush(ctx, t.now())
		}
	}
}

// flush records the counts of the windows ended at now (all of them when
// now is zero) and closes them.
func (t *Trail) flush(ctx context.Context, now time.Time) {
	var ended []*tally
	t.mu.Lock()
	for k, tl := range t.open {
		if now.IsZero() || !now.Before(tl.until) {
			delete(t.open, k)
			ended = append(ended, tl)
		}
	}
	t.mu.Unlock()
	for _, tl := range ended {
		t.record(ctx, tl)
	}
}

// record appends what a window counted: nothing for none, the refusal
// itself for one, and for more one event of their kind, source and actor
// at the last one's time, with their number and nothing that differed
// between them (entity, key, request).
func (t *Trail) record(ctx context.Context, tl *tally) {
	if tl.count == 0 {
		return
	}
	e := tl.last
	if tl.count > 1 {
		e.Entity, e.Kid, e.Request, e.Count = audit.Entity{}, "", "", tl.count
	}
	if _, err := t.next.AppendAudit(ctx, e); err != nil {
		t.log.Error("recording a window's refusals failed", zap.String("action", string(e.Action)),
			zap.Int64("refusals", tl.count), zap.Error(err))
	}
}
