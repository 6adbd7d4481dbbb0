package trail

import (
	"container/heap"
	"context"
	"math"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// Newest first (Query.Newest): every trail's records together, by time,
// then workspace, then seq, the newest first. Each trail is read newest
// first on its index of times (store.AuditFilter.Newest), a batch at a
// time, the first small, and the trails are merged: a page reads every
// trail's newest records, one statement per trail, so that its cost grows
// with the number of trails, not with their length.

// firstBatch is how many records a trail's first batch reads; each next
// batch reads twice as many, up to what the walk still wants.
const firstBatch = 16

// newer reports whether a comes before b newest first.
func newer(a, b audit.Record) bool {
	switch {
	case !a.At.Equal(b.At):
		return a.At.After(b.At)
	case a.Workspace != b.Workspace:
		return a.Workspace < b.Workspace
	}
	return a.Seq > b.Seq
}

// scanNewest calls fn with each record w selects, newest first across its
// trails, and reports whether it read them all (false when w was full
// first). A record of a trail that does not verify ends the reading with
// its break once the trail's records before it were read.
func (s *Service) scanNewest(ctx context.Context, w *walk, fn func(audit.Record) error) (bool, error) {
	trails, err := s.trails(ctx, w)
	if err != nil {
		return false, err
	}
	var h streams
	for _, ws := range trails {
		st := &stream{f: w.newestFilter(ws)}
		if err := s.fill(ctx, w, st); err != nil {
			return false, err
		}
		if len(st.buf) > 0 {
			h = append(h, st)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		st := h[0]
		r := st.buf[0]
		st.buf = st.buf[1:]
		if err := w.take(r, fn); err != nil || w.full() {
			return false, err
		}
		if err := s.fill(ctx, w, st); err != nil {
			return false, err
		}
		if len(st.buf) == 0 {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	return true, nil
}

// stream is a trail read newest first: the filter of its next batch, the
// records read and not taken yet, and what ended its reading.
type stream struct {
	f    store.AuditFilter
	buf  []audit.Record
	size int   // the last batch's
	end  bool  // nothing more to read
	err  error // the break that ended the reading, once buf is taken
}

// fill reads st's next batch when it has taken every record read; the
// error that ended its reading once no record is left before it.
func (s *Service) fill(ctx context.Context, w *walk, st *stream) error {
	if len(st.buf) > 0 {
		return nil
	}
	if st.end {
		return st.err
	}
	st.size = min(w.batch(), max(firstBatch, 2*st.size))
	st.f.Limit = st.size
	rs, err := s.st.ListAudit(ctx, st.f)
	st.buf, st.err, st.end = rs, err, err != nil || len(rs) < st.size
	if len(rs) > 0 {
		last := rs[len(rs)-1]
		st.f.Before = store.AuditPoint{At: last.At, Seq: last.Seq}
	}
	if len(rs) == 0 {
		return err
	}
	return nil
}

// newestFilter is the filter of the first batch of the workspace's trail
// newest first: the records the walk has not read yet, those after its
// position (the cursor's record) in the order of newer.
func (w *walk) newestFilter(ws string) store.AuditFilter {
	q := w.q
	f := store.AuditFilter{Workspace: ws, Since: q.Since, Until: w.until(), Entity: q.Entity, Agent: q.Agent, Newest: true}
	if w.from.Seq == 0 { // the first page
		return f
	}
	f.Before = store.AuditPoint{At: time.UnixMicro(w.from.At).UTC()}
	switch {
	case ws == w.from.Workspace:
		f.Before.Seq = w.from.Seq
	case ws > w.from.Workspace: // read after the cursor's trail at its time
		f.Before.Seq = math.MaxInt64
	}
	return f
}

// streams are the trails a walk newest first merges, as a heap whose
// first is the one with the newest record.
type streams []*stream

func (h streams) Len() int           { return len(h) }
func (h streams) Less(i, j int) bool { return newer(h[i].buf[0], h[j].buf[0]) }
func (h streams) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *streams) Push(x any)        { *h = append(*h, x.(*stream)) }
func (h *streams) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
