package planeclient

import (
	"context"
	"errors"
	"math"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Run follows the backend's changes until ctx is done, dropping each
// changed kid from the caches and adding it to the kid filter, and reading
// again the limits of each client a change names (limits.go). It starts
// by loading the filter, whose number it follows from, and every client's
// limits, emptying the caches
// once there (what was looked up before may predate it); from the newest
// number, without a filter, when the backend serves none. After a failure
// it asks again, after a pause that doubles up to Config.Retry, from the
// last number applied: the cache keeps what it has meanwhile, and the
// first answer catches up. A backend whose numbers went back (a database
// restored), or a filter holding more kids than it was sized for, starts
// it over.
func (s *Source) Run(ctx context.Context) {
	f := feed{s: s, after: -1, up: true}
	for ctx.Err() == nil {
		if err := f.step(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			f.down(err)
			select {
			case <-ctx.Done():
			case <-time.After(f.pause):
			}
		}
	}
}

// feed is Run's state.
type feed struct {
	s     *Source
	after int64 // the last number applied; -1 before the first answer
	up    bool
	pause time.Duration
}

// step asks for the changes once and applies them, or starts over.
func (f *feed) step(ctx context.Context) error {
	if f.after < 0 {
		if err := f.start(ctx); err != nil {
			return err
		}
		f.restored()
		return nil
	}
	// After a failure the first request does not wait: its answer, not
	// the next change, says the feed is up again.
	wait := f.s.cfg.Wait
	if !f.up {
		wait = 0
	}
	ctx, cancel := context.WithTimeout(ctx, wait+f.s.cfg.LookupTimeout)
	defer cancel()
	ch, err := f.s.client.changes(ctx, f.after, wait)
	if err != nil {
		return err
	}
	if err := f.s.limitsChanged(ctx, ch.Changes); err != nil {
		return err
	}
	switch {
	case ch.Last < f.after:
		f.after = -1 // the numbers went back: start over
	default:
		f.after = ch.Last
		if len(ch.Changes) == contract.MaxKeyChanges { // a full page: more follow
			f.after = ch.Changes[len(ch.Changes)-1].Seq
		}
		if full := f.s.changed(ch.Changes); full {
			f.after = -1
		}
	}
	f.restored()
	return nil
}

// start loads the kid filter and follows on from its number, the caches
// emptied; without one, from the newest number.
func (f *feed) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, f.s.cfg.LookupTimeout+filterTimeout)
	defer cancel()
	filter, last, err := f.s.client.filter(ctx)
	if errors.Is(err, ErrUnknown) {
		var ch contract.KeyChanges
		ch, err = f.s.client.changes(ctx, math.MaxInt64, 0)
		last = ch.Last
	}
	if err != nil {
		return err
	}
	if err := f.s.loadLimits(ctx); err != nil {
		return err
	}
	f.s.Forget()
	f.s.filter.Store(filter)
	f.after = last
	return nil
}

// filterTimeout is the time a filter of millions of kids may take to build
// and fetch, beyond a look-up's.
const filterTimeout = 30 * time.Second

// down notes a failure: once logged, and the next pause doubled.
func (f *feed) down(err error) {
	if f.up {
		f.s.cfg.Log.Error("the backend's key feed does not answer; keeping the cached keys and asking again", zap.Error(err))
		f.up, f.pause = false, 100*time.Millisecond
	} else {
		f.pause = min(2*f.pause, f.s.cfg.Retry)
	}
	f.s.cfg.Observer.Feed(false, f.after)
}

// restored notes an answer, logging the return of the feed.
func (f *feed) restored() {
	if !f.up {
		f.s.cfg.Log.Info("the backend's key feed answers again; caught up", zap.Int64("applied", f.after))
		f.up = true
	}
	f.s.applied.Store(max(f.after, 0))
	f.s.cfg.Observer.Feed(true, f.after)
}
