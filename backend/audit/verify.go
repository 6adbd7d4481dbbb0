package audit

import (
	"fmt"
	"time"
)

// Break is where a chain stops verifying: the first record found wrong.
type Break struct {
	Workspace string
	// Seq is the record at which the chain breaks: the altered, misplaced
	// or first missing one.
	Seq    int64
	Reason string
}

func (b *Break) Error() string {
	return fmt.Sprintf("audit: the chain of workspace %q breaks at record %d: %s", b.Workspace, b.Seq, b.Reason)
}

// Verifier checks one chain record by record, in seq order, so that a
// chain of any length is verified in constant memory: Add each record,
// then Close.
type Verifier struct {
	head  Head
	chain *Chain
	// seen is a record a checkpoint saw, outside the database: the chain
	// must hold it as it was; zero when there is none.
	seen Link
	// gone is a record a checkpoint saw, at the time seenAt, that
	// retention has removed since: the prune that removed it must have
	// pruned to a later bound.
	gone   Link
	seenAt time.Time
	// retention, when positive, is the least age a prune may remove.
	retention time.Duration
	// keyed: a keyed record was seen, after which every record is keyed.
	keyed bool
	// prev is the record the next one must follow.
	prev Link
	// anchored: the prune record naming head.Pruned was seen, or none is
	// needed.
	anchored bool
	err      error
}

// NewVerifier returns a verifier of the chain whose head is h, linked by
// c (nil: unkeyed; then a keyed record is a break). Records appended after
// h was read are beyond it: leave them out.
func NewVerifier(h Head, c *Chain) *Verifier {
	return &Verifier{head: h, chain: c, prev: h.Pruned, anchored: h.Pruned == Link{}}
}

// Expect makes seen, a record that a checkpoint saw, part of the check:
// the chain must still hold it, as it was. A record retention has removed
// since is not expected; at, when the checkpoint says it, is the record's
// time, which the prune that removed it must have pruned past.
func (v *Verifier) Expect(seen Link, at time.Time) {
	if seen.Seq > v.head.Pruned.Seq {
		v.seen = seen
	} else {
		v.gone, v.seenAt = seen, at
	}
}

// Retain makes the retention part of the check: a prune record whose bound
// is later than its own time less retention removed records before their
// time.
func (v *Verifier) Retain(retention time.Duration) { v.retention = retention }

// Add checks r, the chain's next record. After the first break it returns
// that break again.
func (v *Verifier) Add(r Record) error {
	if v.err == nil {
		v.err = v.check(r)
	}
	return v.err
}

// Close reports the first break of the chain added, nil when it verifies.
func (v *Verifier) Close() error {
	switch {
	case v.err != nil:
	case v.prev.Seq < v.seen.Seq:
		v.err = v.fail(v.prev.Seq+1, "records %d to %d are missing: a checkpoint saw the chain reach record %d", v.prev.Seq+1, v.seen.Seq, v.seen.Seq)
	case v.prev.Seq < v.head.Last.Seq:
		v.err = v.fail(v.prev.Seq+1, "records %d to %d are missing at the end", v.prev.Seq+1, v.head.Last.Seq)
	case !v.anchored:
		v.err = v.fail(v.head.Pruned.Seq, "no prune record says that records through %d were removed", v.head.Pruned.Seq)
	}
	return v.err
}

// check verifies r against its predecessor and the head.
func (v *Verifier) check(r Record) error {
	if err := r.Validate(); err != nil {
		return v.fail(r.Seq, "invalid record: %v", err)
	}
	h, err := v.chain.Hash(r)
	switch {
	case err != nil:
		return v.fail(r.Seq, "%v", err)
	case v.keyed && !r.Keyed:
		return v.fail(r.Seq, "the record is not keyed, and keyed records come before it: it was written, or rewritten, without the chain's key")
	case r.Workspace != v.head.Workspace:
		return v.fail(r.Seq, "the record belongs to workspace %q", r.Workspace)
	case r.Seq <= v.prev.Seq:
		return v.fail(r.Seq, "the record comes after record %d: repeated or out of order", v.prev.Seq)
	case r.Seq > v.head.Last.Seq:
		return v.fail(r.Seq, "the record is beyond the chain's head, record %d", v.head.Last.Seq)
	case r.Seq > v.prev.Seq+1:
		return v.fail(v.prev.Seq+1, "records %d to %d are missing", v.prev.Seq+1, r.Seq-1)
	case r.Prev != v.prev.Hash:
		return v.fail(r.Seq, "its prev is not %s (one of them was altered)", v.predecessor())
	case r.Seq == v.head.Last.Seq && h != v.head.Last.Hash:
		return v.fail(r.Seq, "its hash is not the head's (it was altered)")
	case r.Seq == v.seen.Seq && h != v.seen.Hash:
		return v.fail(r.Seq, "the record is not the one a checkpoint saw (it was altered)")
	}
	v.keyed = v.keyed || r.Keyed
	if r.Action == RetentionPrune {
		if err := v.checkPrune(r); err != nil {
			return err
		}
	}
	v.prev = Link{Seq: r.Seq, Hash: h}
	return nil
}

// checkPrune checks a prune record against the head, the retention and
// what a checkpoint saw. Prunes remove ever later prefixes, so the latest
// prune record names the head's Pruned and none names a later record.
// Prune records that do not say their bound are older than the bound's
// check.
func (v *Verifier) checkPrune(r Record) error {
	last, before := r.Pruned.Last, r.Pruned.Before
	switch {
	case !before.IsZero() && v.retention > 0 && before.After(r.At.Add(-v.retention)):
		return v.fail(r.Seq, "it removed records to %s, newer than a retention of %v allowed at %s",
			before.Format(time.RFC3339), v.retention, r.At.Format(time.RFC3339))
	case !before.IsZero() && !v.seenAt.IsZero() && r.Pruned.From <= v.gone.Seq && v.gone.Seq <= last.Seq && !v.seenAt.Before(before):
		return v.fail(r.Seq, "it removed record %d, of %s, which a checkpoint saw, though it removed only records before %s",
			v.gone.Seq, v.seenAt.Format(time.RFC3339), before.Format(time.RFC3339))
	case last.Seq > v.head.Pruned.Seq:
		return v.fail(r.Seq, "it says records through %d were removed, the head says through %d", last.Seq, v.head.Pruned.Seq)
	case last.Seq == v.head.Pruned.Seq && last.Hash != v.head.Pruned.Hash:
		return v.fail(r.Seq, "the hash it gives for record %d, the last pruned, is not the head's", last.Seq)
	case last.Seq == v.head.Pruned.Seq:
		v.anchored = true
	}
	return nil
}

// predecessor says what the next record's prev must be.
func (v *Verifier) predecessor() string {
	switch {
	case v.prev == Link{}:
		return "the zero hash that starts a chain"
	case v.prev == v.head.Pruned:
		return fmt.Sprintf("the hash of record %d, the last one pruned", v.prev.Seq)
	}
	return fmt.Sprintf("the hash of record %d", v.prev.Seq)
}

func (v *Verifier) fail(seq int64, format string, args ...any) error {
	return &Break{Workspace: v.head.Workspace, Seq: seq, Reason: fmt.Sprintf(format, args...)}
}

// Verify checks records, the chain of h.Workspace in seq order linked by
// c, against h: nil when it verifies, or a *Break naming the first break.
func Verify(h Head, c *Chain, records []Record) error {
	v := NewVerifier(h, c)
	for _, r := range records {
		if err := v.Add(r); err != nil {
			return err
		}
	}
	return v.Close()
}
