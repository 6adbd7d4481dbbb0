package keyplane

import (
	"context"
	"math"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Run follows the backend's changes until ctx is done, dropping each
// changed kid from the caches. It starts from the newest number, emptying
// the caches once there (what was looked up before may predate it). After
// a failure it asks again, after a pause that doubles up to Config.Retry,
// from the last number applied: the cache keeps what it has meanwhile,
// and the first answer catches up. A backend whose numbers went back (a
// database restored) is followed from its newest number, the caches
// emptied.
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

// step asks for the changes once and applies them.
func (f *feed) step(ctx context.Context) error {
	after, wait := f.after, f.s.cfg.Wait
	if after < 0 {
		after, wait = math.MaxInt64, 0
	}
	ctx, cancel := context.WithTimeout(ctx, wait+f.s.cfg.LookupTimeout)
	defer cancel()
	ch, err := f.s.client.changes(ctx, after, wait)
	if err != nil {
		return err
	}
	switch {
	case f.after < 0 || ch.Last < f.after:
		f.s.Forget()
		f.after = ch.Last
	default:
		f.after = ch.Last
		if len(ch.Changes) == contract.MaxKeyChanges { // a full page: more follow
			f.after = ch.Changes[len(ch.Changes)-1].Seq
		}
		f.s.changed(ch.Changes)
	}
	f.restored()
	return nil
}

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
	f.s.cfg.Observer.Feed(true, f.after)
}
