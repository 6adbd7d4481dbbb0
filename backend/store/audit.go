package store

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// AuditAppender appends events to the audit trail: Audit does, and so does
// what stands before it to decide what reaches it (package audit/window).
type AuditAppender interface {
	// AppendAudit appends e to its workspace's chain, in a transaction of
	// its own, and returns the record. Appends to one chain from any number
	// of processes take seqs one after the other, without gaps, each record
	// following the one before. An invalid event changes nothing. A change
	// that has an event to record appends it in its own transaction
	// instead (see the function AppendAudit).
	AppendAudit(ctx context.Context, e audit.Event) (audit.Record, error)
}

// Audit is the audit trail (package audit): one hash chain of records per
// workspace, the installation's own under the workspace id "". Engines
// share what runs in their transactions (audit.go): AppendAudit,
// PruneAudit (over audit.Pruning, which decides what retention removes),
// DecodeAudit.
type Audit interface {
	AuditAppender
	// ListAudit returns the records of f.Workspace's chain that f selects,
	// in seq order. A stored record that does not parse, or that is not
	// what its row's columns say, ends the list: ListAudit returns the
	// records before it and an *audit.Break naming it.
	ListAudit(ctx context.Context, f AuditFilter) ([]audit.Record, error)
	// ListAuditNewest returns the records f selects newest first (by
	// time, then workspace, then seq: time and seq descending), from
	// f.Before on, of every chain with f.Every, else of f.Workspace's
	// (f.After aside). One statement reads each chain's newest records on
	// the index of its times and merges them. A stored record that does
	// not verify ends the list, as for ListAudit.
	ListAuditNewest(ctx context.Context, f AuditFilter) ([]audit.Record, error)
	// AuditHeads returns the head of every chain, ordered by workspace id.
	AuditHeads(ctx context.Context) ([]audit.Head, error)
	// KeyAudit makes c the chain of the records appended from now on: a
	// store appends unkeyed records until it is keyed (package sealed
	// keys it, from the store's data key, before anything is served).
	KeyAudit(c *audit.Chain)
	// AuditChain returns the chain KeyAudit set, nil before.
	AuditChain() *audit.Chain
	// PruneAudit removes the longest prefix of the workspace's chain whose
	// records are all older than before, appends an audit.RetentionPrune
	// record at now naming it, and makes it the head's Pruned, atomically;
	// it returns how many records it removed. Removing none appends
	// nothing. A prefix with records missing is not removed: PruneAudit
	// returns an *audit.Break naming the first one.
	PruneAudit(ctx context.Context, workspace string, before, now time.Time) (int64, error)
}

// AuditFilter selects records of a chain (Audit.ListAudit), or of every
// chain (Audit.ListAuditNewest, Every).
type AuditFilter struct {
	// Workspace names the chain; "" is the installation's.
	Workspace string
	// Every selects the records of every chain, Workspace aside
	// (ListAuditNewest only).
	Every bool
	// Since and Until bound the records' times: Since <= At < Until, a
	// zero time being no bound.
	Since, Until time.Time
	// Entity, when set, is the id of an entity the records concern: their
	// Entity, or a key a rotation replaced (audit.Event.Replaced).
	Entity string
	// Agent, when set, is who acted: the client of that id, or the person
	// of that name (audit.Event.Person).
	Agent string
	// After is a cursor of ListAudit: only records with a greater Seq are
	// selected.
	After int64
	// Before is a cursor of ListAuditNewest: only the records that follow
	// it newest first are selected (zero: from the newest).
	Before AuditPlace
	// Limit, when positive, is the most records returned.
	Limit int
}

// AuditPlace is a record's place among the trails newest first
// (Audit.ListAuditNewest): its time, workspace and seq.
type AuditPlace struct {
	At        time.Time
	Workspace string
	Seq       int64
}

// PlaceOf is r's place among the trails newest first.
func PlaceOf(r audit.Record) AuditPlace {
	return AuditPlace{At: r.At, Workspace: r.Workspace, Seq: r.Seq}
}

// follows reports whether r comes after p newest first: older, or as old
// and of a later workspace, or of the same workspace and a lower seq.
// The zero place is before every record.
func (p AuditPlace) follows(r audit.Record) bool {
	at := p.At.Truncate(time.Microsecond)
	switch {
	case p.At.IsZero() || r.At.Before(at):
		return true
	case !r.At.Equal(at):
		return false
	}
	return r.Workspace > p.Workspace || r.Workspace == p.Workspace && r.Seq < p.Seq
}

// AuditTx is an engine's side of AppendAudit: statements in one of the
// engine's transactions, with no decision of their own. An engine
// implements it on its transaction handle, so that any of its
// transactions can append.
type AuditTx interface {
	// LockAuditHead returns the head of the workspace's chain, creating
	// an empty one when there is none, and locks it until the transaction
	// ends.
	LockAuditHead(ctx context.Context, workspace string) (audit.Head, error)
	// InsertAudit stores r, whose canonical form is body and whose link
	// is h, and makes it its chain's last record.
	InsertAudit(ctx context.Context, r audit.Record, body []byte, h audit.Hash) error
	// AuditChain returns the store's chain (Audit.KeyAudit).
	AuditChain() *audit.Chain
}

// AppendAudit appends e to its workspace's chain in tx, one of the
// engine's transactions, and returns the record: the decision of
// Audit.AppendAudit, and the hook by which a store method records the
// change it makes in the same transaction. Such a method takes the event
// and calls AppendAudit after its other statements: the chain's head is
// then locked only until the commit, and always as a transaction's last
// lock, so that no two transactions wait for each other through it. Its
// transaction must fail when AppendAudit does, so that nothing is done
// unaudited.
func AppendAudit(ctx context.Context, tx AuditTx, e audit.Event) (audit.Record, error) {
	h, err := tx.LockAuditHead(ctx, e.Workspace)
	if err != nil {
		return audit.Record{}, err
	}
	return appendAfter(ctx, tx, h.Last, e)
}

// AuditIn returns e as it happened in workspace: for a store method that
// learns the workspace of what it changes (AddRecordResources: the
// record's) only in its transaction.
func AuditIn(e audit.Event, workspace string) audit.Event {
	e.Workspace = workspace
	return e
}

// appendAfter stores e as the record that follows last, the locked head's.
func appendAfter(ctx context.Context, tx AuditTx, last audit.Link, e audit.Event) (audit.Record, error) {
	chain := tx.AuditChain()
	r, err := chain.Next(last, e)
	if err != nil {
		return audit.Record{}, err
	}
	h, err := chain.Hash(r)
	if err != nil {
		return audit.Record{}, err
	}
	if err := tx.InsertAudit(ctx, r, r.Canonical(), h); err != nil {
		return audit.Record{}, err
	}
	return r, nil
}

// PruneTx is an engine's side of PruneAudit.
type PruneTx interface {
	AuditTx
	// AuditRows returns up to limit rows of the workspace's chain after
	// seq after, in seq order.
	AuditRows(ctx context.Context, workspace string, after int64, limit int) ([]AuditRow, error)
	// DeleteAudit removes the workspace's records up to last.Seq, makes
	// last its chain's Pruned and returns how many records it removed.
	DeleteAudit(ctx context.Context, workspace string, last audit.Link) (int64, error)
}

// PruneAudit is Audit.PruneAudit, for engines to run in their
// transaction tx: it locks the chain's head, reads the expired prefix for
// audit.Pruning, which decides what is removed and what the prune record
// says, removes it and appends the record.
func PruneAudit(ctx context.Context, tx PruneTx, workspace string, before, now time.Time) (int64, error) {
	h, err := tx.LockAuditHead(ctx, workspace)
	if err != nil {
		return 0, err
	}
	p := audit.NewPruning(h, tx.AuditChain(), before)
	if err := readExpired(ctx, tx, workspace, p); err != nil || !p.Expired() {
		return 0, err
	}
	n, err := tx.DeleteAudit(ctx, workspace, p.Last())
	if err != nil {
		return 0, err
	}
	prune, err := p.Record(now, n)
	if err != nil {
		return 0, err
	}
	_, err = appendAfter(ctx, tx, h.Last, prune)
	return n, err
}

// prunePage is how many records PruneAudit reads at once.
const prunePage = 1000

// readExpired reads the workspace's chain for p, a page at a time, until
// p has found the end of the expired prefix.
func readExpired(ctx context.Context, tx PruneTx, workspace string, p *audit.Pruning) error {
	for {
		rows, err := tx.AuditRows(ctx, workspace, p.Last().Seq, prunePage)
		if err != nil {
			return err
		}
		for _, row := range rows {
			if done, err := p.Add(row.Seq, row.Body); done || err != nil {
				return err
			}
		}
		if len(rows) < prunePage {
			return nil
		}
	}
}

// AuditRow is a stored record as an engine lists it: its row's seq and
// search columns, and its canonical form.
type AuditRow struct {
	Workspace string
	Seq       int64
	Body      []byte
	// At, Client, Entity and Person are the columns the searches read:
	// the record's time, acting client, entity id and person's name (""
	// for none).
	At                     time.Time
	Client, Entity, Person string
}

// matches reports whether the row's columns are r's.
func (row AuditRow) matches(r audit.Record) bool {
	return row.Workspace == r.Workspace && row.Seq == r.Seq && row.At.Equal(r.At) && row.Client == r.Client &&
		row.Entity == r.Entity.ID && row.Person == r.Person.Name
}

// DecodeAudit parses the rows an engine listed for f, in order, for
// Audit.ListAudit and ListAuditNewest. A row that does not parse, whose
// columns are not its record's, or whose record f does not select, ends
// the list: DecodeAudit returns the records before it and an *audit.Break
// naming it.
func DecodeAudit(f AuditFilter, rows []AuditRow) ([]audit.Record, error) {
	out := make([]audit.Record, 0, len(rows))
	for _, row := range rows {
		r, err := audit.Parse(row.Body)
		switch {
		case err != nil:
		case !row.matches(r):
			err = errors.New("its row's columns are not the record's (workspace_id, recorded_at, client_id, entity_id or person was altered)")
		case !f.selects(row.Seq, r):
			err = errors.New("the record is not what its row's columns say")
		}
		if err != nil {
			return out, &audit.Break{Workspace: row.Workspace, Seq: row.Seq, Reason: "stored record: " + err.Error()}
		}
		out = append(out, r)
	}
	return out, nil
}

// selects reports whether f selects r, read from the row of seq.
func (f AuditFilter) selects(seq int64, r audit.Record) bool {
	since, until := f.Since.Truncate(time.Microsecond), f.Until.Truncate(time.Microsecond)
	return (f.Every || r.Workspace == f.Workspace) && r.Seq == seq && seq > f.After && f.Before.follows(r) &&
		(since.IsZero() || !r.At.Before(since)) && (until.IsZero() || r.At.Before(until)) &&
		(f.Entity == "" || r.Entity.ID == f.Entity || slices.Contains(r.Replaced, f.Entity)) && (f.Agent == "" || r.Client == f.Agent || r.Person.Name == f.Agent)
}

// auditPage is how many records VerifyAudit reads at once.
const auditPage = 1000

// AuditCheck is what VerifyAudit holds a chain to besides its head.
type AuditCheck struct {
	// Seen is the record of the chain a checkpoint saw, zero for none,
	// and SeenAt its time, zero when the checkpoint does not say.
	Seen   audit.Link
	SeenAt time.Time
	// Retention, when positive, is the least age a prune may remove.
	Retention time.Duration
}

// VerifyAudit reads the chain of h.Workspace from a, a page at a time, and
// verifies it against h (audit.Verifier, with a's chain) and c: nil when
// it verifies, an *audit.Break naming its first break, or the error that
// stopped the reading. Records appended after h was read are left out.
func VerifyAudit(ctx context.Context, a Audit, h audit.Head, c AuditCheck) error {
	v := audit.NewVerifier(h, a.AuditChain())
	v.Expect(c.Seen, c.SeenAt)
	v.Retain(c.Retention)
	f := AuditFilter{Workspace: h.Workspace, Limit: auditPage}
	for {
		rs, err := a.ListAudit(ctx, f)
		for _, r := range rs {
			if r.Seq > h.Last.Seq {
				return v.Close()
			}
			if err := v.Add(r); err != nil {
				return err
			}
		}
		if err != nil || len(rs) < f.Limit {
			return cmp.Or(err, v.Close())
		}
		f.After = rs[len(rs)-1].Seq
	}
}
