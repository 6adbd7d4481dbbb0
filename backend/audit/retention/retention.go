// Package retention enforces how long the audit trail keeps its records:
// a job that removes the expired prefix of every trail at an interval.
package retention

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/prometheus/client_golang/prometheus"
)

// Default is how long audit records are kept when HDC_AUDIT_RETENTION is
// unset: six years, as HIPAA keeps documentation (45 CFR 164.316(b)(2)).
const Default = 6 * 365 * 24 * time.Hour

// pruneInterval is how often the retention job runs, after once at
// start. Retention counts in years: an hour late is nothing.
const pruneInterval = time.Hour

// Job enforces the backend's audit retention (HDC_AUDIT_RETENTION): it
// removes the expired prefix of every trail, the installation's included,
// with store.Audit.PruneAudit, which records each prune in the trail it
// pruned. Several replicas may run it at once: PruneAudit locks the
// chain's head, so the second finds nothing left to remove.
type Job struct {
	store     store.Audit
	retention time.Duration
	every     time.Duration
	now       func() time.Time
	log       *zap.Logger
	// runs counts the job's runs by result (ok, or failed: some trail
	// could not be pruned); pruned the records it removed.
	runs   *prometheus.CounterVec
	pruned prometheus.Counter
}

// New returns the retention job of st, which removes the records older
// than retention, its metrics registered with reg.
func New(st store.Audit, retention time.Duration, log *zap.Logger, reg prometheus.Registerer) (*Job, error) {
	j := &Job{store: st, retention: retention, every: pruneInterval, now: time.Now, log: log,
		runs: prometheus.NewCounterVec(metrics.Counter("audit_retention_runs_total",
			"Runs of the audit retention job by result: ok, or failed (a trail could not be pruned; the log says why)."), []string{"result"}),
		pruned: prometheus.NewCounter(metrics.Counter("audit_records_pruned_total", "Audit records the retention job removed."))}
	return j, metrics.Register(reg, j.runs, j.pruned)
}

// Run prunes at once, then every j.every until ctx is done. A retention of
// 0 runs nothing.
func (j *Job) Run(ctx context.Context) {
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
func (j *Job) prune(ctx context.Context) int64 {
	heads, err := j.store.AuditHeads(ctx)
	if err != nil {
		if ctx.Err() == nil {
			j.log.Error("audit retention: listing the trails", zap.Error(err))
			j.observe(0, false)
		}
		return 0
	}
	now := j.now()
	before := now.Add(-j.retention)
	var total int64
	ok := true
	for _, h := range heads {
		n, err := j.pruneTrail(ctx, h.Workspace, before, now)
		if ctx.Err() != nil {
			return total
		}
		total, ok = total+n, ok && err == nil
	}
	j.observe(total, ok)
	return total
}

// pruneTrail prunes one trail, logging what it did or why it could not.
func (j *Job) pruneTrail(ctx context.Context, workspace string, before, now time.Time) (int64, error) {
	n, err := j.store.PruneAudit(ctx, workspace, before, now)
	var b *audit.Break
	switch {
	case errors.As(err, &b):
		j.log.Error("audit retention: a trail's expired records are not as written, or not a whole prefix; run hdc audit verify",
			zap.String("workspace", workspace), zap.Int64("seq", b.Seq), zap.String("reason", b.Reason))
	case err != nil && ctx.Err() == nil:
		j.log.Error("audit retention: pruning a trail", zap.String("workspace", workspace), zap.Error(err))
	case n > 0:
		j.log.Info("audit retention: removed expired records", zap.String("workspace", workspace),
			zap.Int64("records", n), zap.Time("before", before))
	}
	return n, err
}

// observe counts a run of the job that removed n records.
func (j *Job) observe(n int64, ok bool) {
	result := "ok"
	if !ok {
		result = "failed"
	}
	j.runs.WithLabelValues(result).Inc()
	j.pruned.Add(float64(n))
}
