package keyplane

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
)

// Hub knows the key plane's newest change number and wakes the requests
// waiting for a newer one.
type Hub struct {
	store store.ClientKeys
	// Poll is how often the newest number is read while the store's
	// notices flow (a safety net), and FastPoll while they do not.
	poll, fastPoll time.Duration
	log            *zap.Logger

	mu       sync.Mutex
	last     int64
	changed  chan struct{} // closed when last grows, then replaced
	noticing bool          // the store's notices flow
	done     chan struct{} // closed when Run returns: waits end
}

// NewHub returns a Hub over s; Run follows the store.
func NewHub(s store.ClientKeys, poll, fastPoll time.Duration, log *zap.Logger) *Hub {
	return &Hub{store: s, poll: poll, fastPoll: fastPoll, log: log, changed: make(chan struct{}), done: make(chan struct{})}
}

// Run follows the store until ctx is done: it listens for notices (again
// after a second when the listening fails) and reads the newest number on
// each notice and at the interval.
func (h *Hub) Run(ctx context.Context) {
	defer close(h.done)
	notices := make(chan struct{}, 1)
	notify := func() {
		select {
		case notices <- struct{}{}:
		default:
		}
	}
	var listening sync.WaitGroup
	listening.Go(func() { h.listen(ctx, notify) })
	defer listening.Wait()
	for {
		h.refresh(ctx)
		t := time.NewTimer(h.interval())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-notices:
		case <-t.C:
		}
		t.Stop()
	}
}

// listen keeps the store's notices flowing until ctx is done.
func (h *Hub) listen(ctx context.Context, notify func()) {
	for ctx.Err() == nil {
		h.setNoticing(true)
		notify() // a change may have come while not listening
		err := h.store.ListenClientKeys(ctx, notify)
		h.setNoticing(false)
		switch {
		case err == store.ErrNoListen:
			return
		case err != nil && ctx.Err() == nil:
			h.log.Warn("key plane notices stopped; reading the changes at the fast interval until they flow again", zap.Error(err))
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (h *Hub) setNoticing(on bool) {
	h.mu.Lock()
	h.noticing = on
	h.mu.Unlock()
}

// interval is how long to wait before reading the newest number again.
func (h *Hub) interval() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.noticing {
		return h.poll
	}
	return h.fastPoll
}

// refresh reads the newest number and wakes the waiters when it grew.
func (h *Hub) refresh(ctx context.Context) {
	_, last, err := h.store.ClientKeyChanges(ctx, 0, 0)
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("reading the key plane's newest change failed", zap.Error(err))
		}
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if last > h.last {
		h.last = last
		close(h.changed)
		h.changed = make(chan struct{})
	}
}

// Last returns the newest change number the hub has read.
func (h *Hub) Last() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// Wait returns when the newest number is past after, when ctx is done, or
// after d; false when Run has returned (the server is stopping).
func (h *Hub) Wait(ctx context.Context, after int64, d time.Duration) bool {
	h.mu.Lock()
	last, changed := h.last, h.changed
	h.mu.Unlock()
	if last > after {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-changed:
	case <-ctx.Done():
	case <-t.C:
	case <-h.done:
		return false
	}
	return true
}
