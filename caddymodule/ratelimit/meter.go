package ratelimit

import (
	"context"
	"sync"
)

// The chunks a Meter reserves grow with its stream, from minChunk to
// maxChunk: a small upload holds little of a quota that others share, and
// a large one asks the engine about once a MiB.
const (
	minChunk = 64 << 10
	maxChunk = 1 << 20
)

// Meter counts a stream of bytes of unknown length against a key's daily
// quota as it is read. It reserves the bytes from an Engine ahead of the
// reading, in chunks, so that the engine is asked once a chunk rather than
// once a read, and Close gives back what it reserved and the stream did
// not use: the engine's count is then the bytes the meter let through.
// Bytes that would pass the quota are not counted, nor let through, and
// from then on nothing is. Its methods may be called from any goroutine.
type Meter struct {
	engine Engine
	key    string
	quota  int64

	mu      sync.Mutex
	counted int64 // the bytes let through
	held    int64 // reserved and not used yet: part of last's
	last    Spent // the last reservation the engine allowed
	state   Spent // what the engine said last
	passed  bool  // the stream passed the quota
	closed  bool
}

// NewMeter returns a Meter of key's quota of quota bytes a day in engine.
func NewMeter(engine Engine, key string, quota int64) *Meter {
	return &Meter{engine: engine, key: key, quota: quota}
}

// Start reserves the first chunk, so that a stream is refused before it is
// read when nothing is left of the quota, and returns what the engine said.
// An error of the engine lets the stream through, uncounted until the
// engine answers again.
func (m *Meter) Start(ctx context.Context) (Spent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.reserve(ctx, 1); err != nil {
		return Spent{Allowed: true}, err
	}
	if !m.state.Allowed {
		m.passed = true
	}
	return m.state, nil
}

// Add counts n bytes read. It reports false, counting none of them, when
// they would pass the quota, and from then on, and once the meter is
// closed. An error of the engine lets the bytes through, uncounted.
func (m *Meter) Add(ctx context.Context, n int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.passed || m.closed:
		return false, nil
	case n <= m.held:
		m.held -= n
		m.counted += n
		return true, nil
	}
	if err := m.reserve(ctx, n-m.held); err != nil {
		m.held = 0
		m.counted += n
		return true, err
	}
	if !m.state.Allowed {
		m.passed = true
		return false, nil
	}
	m.held -= n
	m.counted += n
	return true, nil
}

// reserve asks the engine for need bytes or more, a chunk that grows with
// what the stream has read, adding them to what the meter holds.
func (m *Meter) reserve(ctx context.Context, need int64) error {
	most := max(need, min(max(m.counted, minChunk), maxChunk))
	s, err := m.engine.Reserve(ctx, m.key, m.quota, need, most)
	if err != nil {
		return err
	}
	m.state = s
	if s.Allowed {
		m.last = s
		m.held += s.Granted
	}
	return nil
}

// Close gives back what the meter holds, once, and returns the quota's
// state after it: what is left today and when the quota starts again.
func (m *Meter) Close(ctx context.Context) (Spent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return m.state, nil
	}
	m.closed = true
	if m.held == 0 {
		return m.state, nil
	}
	err := m.engine.Release(ctx, m.key, m.last, m.held)
	if err == nil {
		m.state.Remaining += m.held
	}
	m.held = 0
	return m.state, err
}

// Passed reports whether the stream passed the quota.
func (m *Meter) Passed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.passed
}

// Counted returns the bytes the meter let through.
func (m *Meter) Counted() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counted
}
