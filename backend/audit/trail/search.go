package trail

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// Page is a page of a search: each record's listing (Listing), and the
// cursor of the next page, empty on the last. A page may hold fewer
// records than its limit and still have a next one, when a search by
// action read scanBudget records without filling it.
type Page struct {
	Items []json.RawMessage `json:"items"`
	Next  string            `json:"next,omitempty"`
}

// scanBudget bounds the records one page of a search by action reads
// (the store filters the rest; the action is filtered here).
const scanBudget = 10 * MaxLimit

// Search returns a page of the records q selects, trails in workspace
// order, each oldest first, or with q.Newest every trail's records
// together, newest first, and records the search for the person of ctx
// (see the package doc) before it answers.
func (s *Service) Search(ctx context.Context, q Query) (Page, error) {
	limit := cmp.Or(q.Limit, DefaultLimit)
	if err := q.Validate(); err != nil {
		return Page{}, err
	}
	if limit > MaxLimit {
		return Page{}, invalid("limit must be a whole number from 1 to " + strconv.Itoa(MaxLimit))
	}
	from, err := decodePosition(q, s.now())
	if err != nil {
		return Page{}, err
	}
	w := &walk{q: q, from: from, want: limit + 1} // one more tells whether there is a next page
	if q.Action != "" {
		w.budget = scanBudget
	}
	var recs []audit.Record
	done, err := s.scan(ctx, w, func(r audit.Record) error { recs = append(recs, r); return nil })
	if err != nil {
		return Page{}, err
	}
	p := Page{Items: make([]json.RawMessage, 0, min(len(recs), limit))}
	switch {
	case len(recs) > limit:
		recs = recs[:limit]
		p.Next = from.after(recs[limit-1]).encode()
	case !done:
		p.Next = w.at.encode()
	}
	for _, r := range recs {
		b, err := Listing(s.st.AuditChain(), r)
		if err != nil {
			return Page{}, err
		}
		p.Items = append(p.Items, b)
	}
	return p, s.recordRead(ctx, audit.AuditSearch, q)
}

// Listing is a record as a search lists it: its canonical form, what its
// successor's prev links, with the record's own link added as the last
// member, "hash": the HMAC-SHA-256 of that form under the chain's key c
// (v 2), or its SHA-256 (v 1).
func Listing(c *audit.Chain, r audit.Record) (json.RawMessage, error) {
	h, err := c.Hash(r)
	if err != nil {
		return nil, err
	}
	canonical := r.Canonical()
	out := append(canonical[:len(canonical)-1:len(canonical)-1], `,"hash":"`...)
	out = append(out, h.String()...)
	return append(out, `"}`...), nil
}

// walk is a reading of the trails: what it selects, where it starts, when
// it stops, and how far it got.
type walk struct {
	q    Query
	from position
	// want stops the walk after this many records selected, budget after
	// this many read; 0 for no bound.
	want, budget int
	// selected and read count the records; at is the last one read.
	selected, read int
	at             position
}

// until is the end of the records w reads: the query's, or the time the
// search began, whichever comes first.
func (w *walk) until() time.Time {
	until := w.from.began()
	if !w.q.Until.IsZero() && w.q.Until.Before(until) {
		until = w.q.Until
	}
	return until
}

// take reads r: its position is where w stands, and fn has it when the
// query's action is r's.
func (w *walk) take(r audit.Record, fn func(audit.Record) error) error {
	w.read++
	w.at = w.from.after(r)
	if w.q.Action != "" && r.Action != w.q.Action {
		return nil
	}
	w.selected++
	return fn(r)
}

// full reports whether w has what it wants, or has read its budget.
func (w *walk) full() bool {
	return w.want > 0 && w.selected >= w.want || w.budget > 0 && w.read >= w.budget
}

// batch is how many records to ask of the store next.
func (w *walk) batch() int {
	if w.q.Action == "" && w.want > 0 {
		return min(w.want-w.selected, MaxLimit)
	}
	return MaxLimit
}

// scan calls fn with each record w selects, trail by trail, or newest
// first across the trails (scanNewest), and reports whether it read them
// all (false when w was full first).
func (s *Service) scan(ctx context.Context, w *walk, fn func(audit.Record) error) (bool, error) {
	if w.q.Newest {
		return s.scanNewest(ctx, w, fn)
	}
	trails, err := s.trails(ctx, w)
	if err != nil {
		return false, err
	}
	for _, ws := range trails {
		var after int64
		if ws == w.from.Workspace {
			after = w.from.Seq
		}
		if done, err := s.scanTrail(ctx, w, ws, after, fn); !done || err != nil {
			return false, err
		}
	}
	return true, nil
}

// trails returns the workspaces whose trails w reads, in order: the one
// of a scoped query, or every one (from the cursor's on, unless newest
// first).
func (s *Service) trails(ctx context.Context, w *walk) ([]string, error) {
	if w.q.Scoped {
		return []string{w.q.Workspace}, nil
	}
	heads, err := s.st.AuditHeads(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range heads {
		if w.q.Newest || h.Workspace >= w.from.Workspace {
			out = append(out, h.Workspace)
		}
	}
	slices.Sort(out) // the order of the cursor's comparison, whatever the database's collation
	return out, nil
}

// scanTrail calls fn with each record w selects of the workspace's trail
// after seq after, a batch at a time, and reports whether it read them
// all. A record that does not verify ends the reading with its break,
// after the records before it.
func (s *Service) scanTrail(ctx context.Context, w *walk, ws string, after int64, fn func(audit.Record) error) (bool, error) {
	q := w.q
	f := store.AuditFilter{Workspace: ws, Since: q.Since, Until: w.until(), Entity: q.Entity, Agent: q.Agent, After: after}
	for {
		f.Limit = w.batch()
		rs, err := s.st.ListAudit(ctx, f)
		for _, r := range rs {
			if err := w.take(r, fn); err != nil || w.full() {
				return false, err
			}
		}
		if err != nil || len(rs) < f.Limit {
			return err == nil, err
		}
		f.After = rs[len(rs)-1].Seq
	}
}
