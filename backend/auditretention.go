package backend

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// DefaultAuditRetention is how long audit records are kept by default: six
// years, as HIPAA keeps documentation (45 CFR 164.316(b)(2)).
const DefaultAuditRetention = 6 * 365 * 24 * time.Hour

// auditPruneInterval is how often the retention job runs, after once at
// start. Retention counts in years: an hour late is nothing.
const auditPruneInterval = time.Hour

// auditRetention is the job that enforces Config.AuditRetention: it
// removes the expired prefix of every trail, the installation's included,
// with store.Audit.PruneAudit, which records each prune in the trail it
// pruned. Several replicas may run it at once: PruneAudit locks the
// chain's head, so the second finds nothing left to remove.
type auditRetention struct {
	store     store.Audit
	retention time.Duration
	every     time.Duration
	now       func() time.Time
	log       *zap.Logger
}

// run prunes at once, then every j.every until ctx is done. A retention of
// 0 runs nothing.
func (j *auditRetention) run(ctx context.Context) {
	if j.retention <= 0 {
		return
	}
	t := time.NewTicker(j.every)
	defer t.Stop()
	for {
		j.prune(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prune removes, in every trail, the records older than the retention and
// returns how many it removed. A trail it cannot prune (a break in the
// expired prefix, a failure of the store) is logged and left for the next
// run; the others are pruned all the same.
func (j *auditRetention) prune(ctx context.Context) int64 {
	heads, err := j.store.AuditHeads(ctx)
	if err != nil {
		if ctx.Err() == nil {
			j.log.Error("audit retention: listing the trails", zap.Error(err))
		}
		return 0
	}
	now := j.now()
	before := now.Add(-j.retention)
	var total int64
	for _, h := range heads {
		n, err := j.store.PruneAudit(ctx, h.Workspace, before, now)
		var b *audit.Break
		switch {
		case errors.As(err, &b):
			j.log.Error("audit retention: a trail's expired records are not a whole prefix; run hdc audit verify",
				zap.String("workspace", h.Workspace), zap.Int64("seq", b.Seq), zap.String("reason", b.Reason))
		case err != nil:
			if ctx.Err() != nil {
				return total
			}
			j.log.Error("audit retention: pruning a trail", zap.String("workspace", h.Workspace), zap.Error(err))
		case n > 0:
			j.log.Info("audit retention: removed expired records", zap.String("workspace", h.Workspace),
				zap.Int64("records", n), zap.Time("before", before))
		}
		total += n
	}
	return total
}
