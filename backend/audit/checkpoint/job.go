package checkpoint

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
)

// Job checkpoints the heads of every trail to a destination.
type Job struct {
	// Heads is the trails' heads: store.Audit's AuditHeads.
	Heads interface {
		AuditHeads(context.Context) ([]audit.Head, error)
	}
	// HeadTime reads the time of a head's last record.
	HeadTime func(context.Context, audit.Head) (time.Time, error)
	To       Destination
	Key      []byte
	Every    time.Duration
	Replica  string
	Now      func() time.Time
	Log      *zap.Logger

	last []Head // the heads of the last checkpoint written
	// succeeded is when a run last left the destination holding the
	// current heads, in Unix nanoseconds (LastSuccess).
	succeeded atomic.Int64
}

// LastSuccess returns when a run last left the destination holding the
// trails' current heads, having written them or found them unchanged
// since it did; the zero time before the first. It may be called while
// the job runs: the backend exports it as a metric.
func (j *Job) LastSuccess() time.Time {
	if ns := j.succeeded.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// Run checkpoints at once, then every j.Every until ctx is done.
func (j *Job) Run(ctx context.Context) {
	t := time.NewTicker(j.Every)
	defer t.Stop()
	for {
		j.checkpoint(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Final writes the checkpoint of a stopping backend, within timeout.
func (j *Job) Final(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	j.checkpoint(ctx)
}

// checkpoint writes the heads when they changed since the last one. A
// failure is logged; the next run tries again.
func (j *Job) checkpoint(ctx context.Context) {
	heads, err := j.Heads.AuditHeads(ctx)
	if err == nil && slices.EqualFunc(heads, j.last, func(h audit.Head, last Head) bool { return h == last.Head }) {
		j.succeeded.Store(j.Now().UnixNano())
		return
	}
	var timed []Head
	if err == nil {
		timed = j.timed(ctx, heads)
		err = j.To.Write(ctx, New(timed, j.Now(), j.Replica, j.Key))
	}
	if err != nil {
		if ctx.Err() == nil {
			j.Log.Error("writing the audit checkpoint failed; the next run tries again", zap.Error(err))
		}
		return
	}
	j.last = timed
	j.succeeded.Store(j.Now().UnixNano())
}

// timed returns heads with the time of each one's last record: the last
// checkpoint's for a head it saw, else read. A record that cannot be read
// leaves its time out; verify then checks its trail without it.
func (j *Job) timed(ctx context.Context, heads []audit.Head) []Head {
	known := make(map[audit.Head]time.Time, len(j.last))
	for _, h := range j.last {
		known[h.Head] = h.At
	}
	out := make([]Head, len(heads))
	for i, h := range heads {
		out[i].Head = h
		if at, ok := known[h]; ok || h.Last.Seq == 0 {
			out[i].At = at
			continue
		}
		if at, err := j.HeadTime(ctx, h); err == nil {
			out[i].At = at
		}
	}
	return out
}
