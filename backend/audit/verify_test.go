package audit

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// chain returns n records of workspace ws after last, a minute apart,
// and the head they make.
func chain(t testing.TB, ws string, last Link, n int) ([]Record, Head) {
	t.Helper()
	var rs []Record
	for i := range n {
		r := mustNext(t, last, Event{At: t0.Add(time.Duration(i) * time.Minute), Action: Refresh, Outcome: Success, Workspace: ws, Client: client1})
		rs = append(rs, r)
		last = r.Link()
	}
	return rs, Head{Workspace: ws, Last: last}
}

// pruned returns a chain of 10 records whose first 4 retention removed,
// with the prune record as record 11.
func pruned(t *testing.T) ([]Record, Head) {
	rs, h := chain(t, "w", Link{}, 10)
	gone := rs[3].Link()
	p := mustNext(t, h.Last, Event{At: t0.Add(time.Hour), Action: RetentionPrune, Outcome: Success, Workspace: "w", Pruned: Pruned{From: 1, Last: gone}})
	return append(rs[4:], p), Head{Workspace: "w", Last: p.Link(), Pruned: gone}
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name    string
		records func(t *testing.T) ([]Record, Head)
		seq     int64  // where the break is; 0 when the chain verifies
		reason  string // part of the break's reason
	}{
		{"intact", func(t *testing.T) ([]Record, Head) { return chain(t, "w", Link{}, 5) }, 0, ""},
		{"empty", func(t *testing.T) ([]Record, Head) { return nil, Head{Workspace: "w"} }, 0, ""},
		{"installation trail", func(t *testing.T) ([]Record, Head) {
			r := mustNext(t, Link{}, Event{At: t0, Action: LoginFailed, Outcome: Denied})
			return []Record{r}, Head{Last: r.Link()}
		}, 0, ""},
		{"pruned", pruned, 0, ""},
		{"altered", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			rs[2].Outcome = Denied
			return rs, h
		}, 4, "prev is not the hash of record 3"},
		{"last altered", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			rs[4].At = rs[4].At.Add(time.Second)
			return rs, h
		}, 5, "head"},
		{"deleted", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			return slices.Delete(rs, 1, 3), h
		}, 2, "records 2 to 3 are missing"},
		{"first deleted", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			return rs[1:], h
		}, 1, "records 1 to 1 are missing"},
		{"last deleted", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			return rs[:4], h
		}, 5, "missing at the end"},
		{"renumbered after a deletion", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			rs = slices.Delete(rs, 2, 3)
			rs[2].Seq, rs[3].Seq = 3, 4
			h.Last = rs[3].Link()
			return rs, h
		}, 3, "prev is not the hash of record 2"},
		{"reordered", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			rs[1], rs[2] = rs[2], rs[1]
			return rs, h
		}, 2, "records 2 to 2 are missing"},
		{"repeated", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			return slices.Insert(rs, 2, rs[1]), h
		}, 2, "repeated or out of order"},
		{"from another workspace", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			other, _ := chain(t, "v", rs[1].Link(), 1)
			rs[2] = other[0]
			return rs, h
		}, 3, `workspace "v"`},
		{"beyond the head", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			h.Last = rs[2].Link()
			return rs, h
		}, 4, "beyond the chain's head"},
		{"invalid", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			rs[3].Action = "delete_everything"
			return rs, h
		}, 4, "invalid record"},
		{"prefix deleted without a prune", func(t *testing.T) ([]Record, Head) {
			rs, h := chain(t, "w", Link{}, 5)
			h.Pruned = rs[1].Link()
			return rs[2:], h
		}, 2, "no prune record"},
		{"pruned further than recorded", func(t *testing.T) ([]Record, Head) {
			rs, h := pruned(t)
			h.Pruned = rs[0].Link()
			return rs[1:], h
		}, 5, "no prune record says that records through 5"},
		{"pruned records put back", func(t *testing.T) ([]Record, Head) {
			rs, _ := chain(t, "w", Link{}, 10)
			kept, h := pruned(t)
			h.Pruned = Link{}
			return append(rs[:4], kept...), h
		}, 11, "the head says through 0"},
		{"pruned records deleted after the prune", func(t *testing.T) ([]Record, Head) {
			rs, h := pruned(t)
			return rs[2:], h
		}, 5, "records 5 to 6 are missing"},
		{"pruned anchor altered", func(t *testing.T) ([]Record, Head) {
			rs, h := pruned(t)
			h.Pruned.Hash[0] ^= 1
			return rs, h
		}, 5, "the last one pruned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, h := tt.records(t)
			err := Verify(h, nil, rs)
			if tt.seq == 0 {
				if err != nil {
					t.Fatalf("Verify() = %v, want nil", err)
				}
				return
			}
			var b *Break
			if !errors.As(err, &b) {
				t.Fatalf("Verify() = %v, want a *Break", err)
			}
			if b.Seq != tt.seq || b.Workspace != h.Workspace || !strings.Contains(b.Reason, tt.reason) {
				t.Fatalf("Verify() = %v, want a break at record %d about %q", err, tt.seq, tt.reason)
			}
		})
	}
}

// TestVerifierKeepsTheFirstBreak adds records after a break: the first
// break stays the answer.
func TestVerifierKeepsTheFirstBreak(t *testing.T) {
	rs, h := chain(t, "w", Link{}, 5)
	v := NewVerifier(h, nil)
	first := v.Add(rs[1])
	if first == nil {
		t.Fatal("Add accepted record 2 as the first")
	}
	for _, r := range rs[2:] {
		if err := v.Add(r); err != first {
			t.Fatalf("Add after the break = %v, want %v", err, first)
		}
	}
	if err := v.Close(); err != first {
		t.Fatalf("Close = %v, want %v", err, first)
	}
}

// TestVerifyRetention: a prune record that says it removed records to a
// bound later than its time less the retention removed records before
// their time; so did one that removed a record a checkpoint saw with a
// time at or after its bound. A prune record that names no bound, as
// earlier versions wrote, is not held to either.
func TestVerifyRetention(t *testing.T) {
	const retention = 30 * time.Minute
	base := t0.Truncate(time.Microsecond) // as records keep their times
	// Ten records a minute apart from t0, the first four pruned at
	// t0+1h to the bound before.
	build := func(t *testing.T, before time.Time) ([]Record, Head, []Record) {
		rs, h := chain(t, "w", Link{}, 10)
		gone := rs[3].Link()
		p := mustNext(t, h.Last, Event{At: base.Add(time.Hour), Action: RetentionPrune, Outcome: Success, Workspace: "w",
			Pruned: Pruned{From: 1, Last: gone, Before: before}})
		return append(rs[4:], p), Head{Workspace: "w", Last: p.Link(), Pruned: gone}, rs
	}
	tests := []struct {
		name   string
		before time.Time
		seen   int // the record a checkpoint saw (its index), -1 for none
		want   string
	}{
		{"bound within the retention", base.Add(4 * time.Minute), -1, ""},
		{"bound at the retention", base.Add(time.Hour - retention), -1, ""},
		{"bound past the retention", base.Add(time.Hour - retention + time.Second), -1, "newer than a retention of 30m0s"},
		{"no bound, as earlier versions wrote", time.Time{}, -1, ""},
		{"a seen record older than the bound", base.Add(4 * time.Minute), 3, ""},
		{"a seen record at the bound", base.Add(3 * time.Minute), 3, "which a checkpoint saw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, h, all := build(t, tt.before)
			v := NewVerifier(h, nil)
			v.Retain(retention)
			if tt.seen >= 0 {
				v.Expect(all[tt.seen].Link(), all[tt.seen].At)
			}
			for _, r := range rs {
				v.Add(r)
			}
			err := v.Close()
			var b *Break
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("the chain does not verify: %v", err)
			case tt.want != "" && (!errors.As(err, &b) || b.Seq != 11 || !strings.Contains(b.Reason, tt.want)):
				t.Fatalf("break %v, want one at the prune record, 11, about %q", err, tt.want)
			}
		})
	}
}
