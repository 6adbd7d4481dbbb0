package delivery

import (
	"context"

	"go.uber.org/zap"
)

// prune deletes what the retentions let go: finished deliveries with their
// attempts and events, and the kept deliveries of disabled subscriptions,
// after Retention; attempts after AttemptRetention. One job does both.
func (d *Dispatcher) prune(ctx context.Context) {
	now := d.now()
	if d.cfg.Retention > 0 {
		n, err := d.cfg.Store.PruneOutbox(ctx, now.Add(-d.cfg.Retention))
		d.logPrune(ctx, "deliveries", n, err)
	}
	if d.cfg.AttemptRetention > 0 {
		n, err := d.cfg.Store.PruneAttempts(ctx, now.Add(-d.cfg.AttemptRetention))
		d.logPrune(ctx, "attempts", n, err)
	}
}

// logPrune logs how the pruning of what went.
func (d *Dispatcher) logPrune(ctx context.Context, what string, n int64, err error) {
	switch {
	case err != nil && ctx.Err() == nil:
		d.cfg.Log.Error("pruning the webhook outbox failed", zap.String("what", what), zap.Error(err))
	case n > 0:
		d.cfg.Log.Info("pruned the webhook outbox", zap.Int64(what, n))
	}
}
