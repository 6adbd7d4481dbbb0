package planeclient

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Uses is the last use of each kid at this edge, as Report reports them.
type Uses interface {
	// Unreported returns at most n kids used since the use of theirs last
	// marked Reported, each once, with its last use.
	Unreported(n int) []contract.KidUse
	// Reported marks uses as reported: a kid is unreported again once
	// used after the use reported.
	Reported(uses []contract.KidUse)
}

// Report tells the backend, every Config.ReportEvery until ctx is done,
// which edge this is (an instance id made at random with the Source, which
// the edge logs here: it names the edge for as long as the process keeps
// the Source, across Caddy's config reloads), the number of the last
// change the feed applied, and the kids of uses unreported
// (contract.PathEdgeReport). A report that fails leaves them unreported,
// so that the next one carries them, each once, with its latest use; the
// failures are logged when they start and when they end. When ctx is done
// it reports once more, each request within Config.LookupTimeout, so that
// an edge that stops keeps no use to itself.
func (s *Source) Report(ctx context.Context, uses Uses) {
	s.cfg.Log.Info("reporting to the backend", zap.String("instance", s.id), zap.Duration("every", s.cfg.ReportEvery))
	t := time.NewTicker(s.cfg.ReportEvery)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			s.reportUses(context.WithoutCancel(ctx), uses)
			return
		case <-t.C:
		}
		err := s.reportUses(ctx, uses)
		switch {
		case ctx.Err() != nil: // stopping: the next turn reports once more
		case err != nil && !failing:
			s.cfg.Log.Warn("reporting to the backend failed; keeping the uses of keys for the next report", zap.Error(err))
		case err == nil && failing:
			s.cfg.Log.Info("reporting to the backend works again")
		}
		failing = err != nil
	}
}

// reportUses reports the unreported uses, contract.MaxEdgeReportUses at a
// time, until fewer are left: once when there is none, so that the report
// still tells the edge's applied number and that it is alive.
func (s *Source) reportUses(ctx context.Context, uses Uses) error {
	for {
		batch := uses.Unreported(contract.MaxEdgeReportUses)
		ctx, cancel := context.WithTimeout(ctx, s.cfg.LookupTimeout)
		err := s.client.report(ctx, contract.EdgeReport{Instance: s.id, AppliedSeq: s.applied.Load(), Uses: batch})
		cancel()
		if err != nil {
			return err
		}
		uses.Reported(batch)
		if len(batch) < contract.MaxEdgeReportUses {
			return nil
		}
	}
}
