package audit

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// stored is a record as the store keeps it: its row's seq, its canonical
// form.
type stored struct {
	seq  int64
	body []byte
}

func storedOf(rs []Record) []stored {
	out := make([]stored, len(rs))
	for i, r := range rs {
		out[i] = stored{r.Seq, r.Canonical()}
	}
	return out
}

// unkeyed returns n records of a chain of workspace w, stored, and its head.
func unkeyed(t *testing.T, n int) ([]stored, Head, *Chain) {
	rs, h := chain(t, "w", Link{}, n)
	return storedOf(rs), h, nil
}

// prunedTo reads rows for a pruning of h before before, until the prefix
// ends, and returns the pruning and Add's error.
func prunedTo(h Head, c *Chain, before time.Time, rows []stored) (*Pruning, error) {
	p := NewPruning(h, c, before)
	for _, row := range rows {
		if done, err := p.Add(row.seq, row.body); done || err != nil {
			return p, err
		}
	}
	return p, nil
}

// TestPruning: the expired prefix ends before the first record of the
// bound or later, or at the head; a record read that is not as written
// is a break, named.
func TestPruning(t *testing.T) {
	key := NewChain([]byte("the chain's key, from the keeper"))
	tests := []struct {
		name   string
		rows   func(t *testing.T) ([]stored, Head, *Chain)
		before time.Duration // after t0
		last   int64         // the expired prefix's last record, 0 for none
		broken int64         // the break's record, 0 for none
		reason string
	}{
		{"a prefix", func(t *testing.T) ([]stored, Head, *Chain) { return unkeyed(t, 5) }, 2 * time.Minute, 2, 0, ""},
		{"nothing expired", func(t *testing.T) ([]stored, Head, *Chain) { return unkeyed(t, 5) }, 0, 0, 0, ""},
		{"to the head", func(t *testing.T) ([]stored, Head, *Chain) { return unkeyed(t, 5) }, time.Hour, 5, 0, ""},
		{"not past the head", func(t *testing.T) ([]stored, Head, *Chain) {
			rows, _, c := unkeyed(t, 5)
			_, h := chain(t, "w", Link{}, 3)
			return rows, h, c
		}, time.Hour, 3, 0, ""},
		{"after a prune", func(t *testing.T) ([]stored, Head, *Chain) {
			rs, h := pruned(t)
			return storedOf(rs), h, nil
		}, 6 * time.Minute, 6, 0, ""},
		{"keyed", func(t *testing.T) ([]stored, Head, *Chain) {
			rs, h := keyedChain(t, key, nil, Link{}, 4)
			return storedOf(rs), h, key
		}, time.Hour, 4, 0, ""},
		{"keyed, without the key", func(t *testing.T) ([]stored, Head, *Chain) {
			rs, h := keyedChain(t, key, nil, Link{}, 4)
			return storedOf(rs), h, nil
		}, time.Hour, 0, 1, "link is not the head's"},
		{"a record missing", func(t *testing.T) ([]stored, Head, *Chain) {
			rows, h, c := unkeyed(t, 5)
			return append(rows[:1], rows[2:]...), h, c
		}, time.Hour, 1, 2, "missing"},
		{"a row under another seq", func(t *testing.T) ([]stored, Head, *Chain) {
			rows, h, c := unkeyed(t, 5)
			rows[1].body = rows[2].body
			return rows, h, c
		}, time.Hour, 1, 2, "missing"},
		{"a record altered", func(t *testing.T) ([]stored, Head, *Chain) {
			rs, h := chain(t, "w", Link{}, 5)
			rs[1].Client = "6b2dab63-4c8f-4e1f-8054-3f9f2d7c8b02"
			return storedOf(rs), h, nil
		}, time.Hour, 2, 3, "prev"},
		{"the head's record altered", func(t *testing.T) ([]stored, Head, *Chain) {
			rs, h := chain(t, "w", Link{}, 3)
			rs[2].Client = "6b2dab63-4c8f-4e1f-8054-3f9f2d7c8b02"
			return storedOf(rs), h, nil
		}, time.Hour, 2, 3, "link is not the head's"},
		{"not a record", func(t *testing.T) ([]stored, Head, *Chain) {
			rows, h, c := unkeyed(t, 5)
			rows[1].body = []byte("{}")
			return rows, h, c
		}, time.Hour, 1, 2, "stored record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, h, c := tt.rows(t)
			p, err := prunedTo(h, c, t0.Add(tt.before), rows)
			var b *Break
			switch {
			case tt.broken == 0 && err != nil:
				t.Fatalf("Add = %v, want no break", err)
			case tt.broken != 0 && (!errors.As(err, &b) || b.Seq != tt.broken || b.Workspace != "w" || !strings.Contains(b.Reason, tt.reason)):
				t.Fatalf("Add = %v, want a break at record %d saying %q", err, tt.broken, tt.reason)
			case tt.broken == 0 && max(tt.last, h.Pruned.Seq) != p.Last().Seq:
				t.Fatalf("the prefix ends at record %d, want %d", p.Last().Seq, tt.last)
			case tt.broken == 0 && p.Expired() != (tt.last > 0):
				t.Fatalf("Expired() = %v with the prefix through record %d", p.Expired(), tt.last)
			}
		})
	}
}

// TestPruningRecord: the prune record names the prefix, from the record
// after the last one pruned before to its last, and the bound, which is
// the records' own to the microsecond; a store that removed another
// number of records than the prefix holds is told which are missing.
func TestPruningRecord(t *testing.T) {
	rs, h := pruned(t)
	before := t0.Add(6 * time.Minute)
	p, err := prunedTo(h, nil, before, storedOf(rs))
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(2 * time.Hour)
	e, err := p.Record(now, 2)
	want := Pruned{From: 5, Last: rs[1].Link(), Before: before.Truncate(time.Microsecond)}
	if err != nil || e.Pruned != want || e.Action != RetentionPrune || e.Workspace != "w" || !e.At.Equal(now) {
		t.Fatalf("Record = %+v, %v, want the prune of %+v", e, err, want)
	}
	if err := e.Validate(); err != nil {
		t.Fatalf("the prune record does not validate: %v", err)
	}
	var b *Break
	if _, err := p.Record(now, 1); !errors.As(err, &b) || b.Seq != 5 || !strings.Contains(b.Reason, "records 5 to 6 are missing") {
		t.Fatalf("Record after removing 1 of 2 records = %v, want a break at record 5", err)
	}
}
