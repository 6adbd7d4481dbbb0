package auditcheckpoint

import (
	"context"
	"slices"
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
	To      Destination
	Key     []byte
	Every   time.Duration
	Replica string
	Now     func() time.Time
	Log     *zap.Logger

	last []audit.Head // the heads of the last checkpoint written
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
	if err == nil && slices.Equal(heads, j.last) {
		return
	}
	if err == nil {
		err = j.To.Write(ctx, New(heads, j.Now(), j.Replica, j.Key))
	}
	if err != nil {
		if ctx.Err() == nil {
			j.Log.Error("writing the audit checkpoint failed; the next run tries again", zap.Error(err))
		}
		return
	}
	j.last = heads
}
