package audit

import (
	"fmt"
	"time"
)

// Pruning decides what retention removes from one chain: the longest
// prefix whose records all happened before a bound, and the prune record
// that names it. What has expired is read from the records themselves,
// not from a column a writer of the database could set: a keyed record's
// time is as trustworthy as the chain's MAC. Each record read, the first
// one kept included, must follow the one before it, and the head's last
// record must be the head's: else the chain's records are not as written,
// and Add returns a *Break.
//
// The store reads the chain in seq order from the record after the head's
// Pruned, Adds each record until Add says the prefix ends, removes the
// records through Last when there are any (Expired), and appends the
// Record it returns.
type Pruning struct {
	head   Head
	chain  *Chain
	before time.Time
	last   Link
}

// NewPruning returns the pruning of the chain whose head is h, linked by
// c, of the records before before (to the microsecond, as records keep
// their times).
func NewPruning(h Head, c *Chain, before time.Time) *Pruning {
	return &Pruning{head: h, chain: c, before: before.Truncate(time.Microsecond), last: h.Pruned}
}

// Last returns the last record of the expired prefix read so far, the
// head's Pruned while there is none.
func (p *Pruning) Last() Link { return p.last }

// Expired reports whether the prefix read so far holds a record.
func (p *Pruning) Expired() bool { return p.last.Seq > p.head.Pruned.Seq }

// Add reads the chain's next record, stored under seq as body, and
// reports whether the expired prefix ended before it: then, or after an
// error, Add has nothing more to read.
func (p *Pruning) Add(seq int64, body []byte) (done bool, err error) {
	r, err := Parse(body)
	switch {
	case err != nil:
		return true, p.fail(seq, "stored record: %v", err)
	case seq != p.last.Seq+1 || r.Seq != seq:
		return true, p.fail(p.last.Seq+1, "records are missing; retention removes only whole prefixes")
	case r.Prev != p.last.Hash:
		return true, p.fail(r.Seq, "its prev is not the link of the record before it (one of them was altered)")
	case !r.At.Before(p.before) || r.Seq > p.head.Last.Seq:
		return true, nil
	}
	link, err := p.chain.Hash(r)
	if err != nil || r.Seq == p.head.Last.Seq && link != p.head.Last.Hash {
		return true, p.fail(r.Seq, "its link is not the head's (it was altered)")
	}
	p.last = Link{Seq: r.Seq, Hash: link}
	return false, nil
}

// Record returns the prune record, at now, of the expired prefix, of which
// the store removed removed records: a *Break when that is not the whole
// prefix, some of its records being missing.
func (p *Pruning) Record(now time.Time, removed int64) (Event, error) {
	from := p.head.Pruned.Seq + 1
	if removed != p.last.Seq-from+1 {
		return Event{}, p.fail(from, "some of records %d to %d are missing; retention removes only whole prefixes", from, p.last.Seq)
	}
	return Event{At: now, Action: RetentionPrune, Outcome: Success, Workspace: p.head.Workspace,
		Pruned: Pruned{From: from, Last: p.last, Before: p.before}}, nil
}

func (p *Pruning) fail(seq int64, format string, args ...any) error {
	return &Break{Workspace: p.head.Workspace, Seq: seq, Reason: fmt.Sprintf(format, args...)}
}
