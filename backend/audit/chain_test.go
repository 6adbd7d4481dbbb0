package audit

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// keyedChain returns n records of workspace w after the records legacy
// (unkeyed) and their head, appended by c.
func keyedChain(t *testing.T, c *Chain, legacy []Record, last Link, n int) ([]Record, Head) {
	t.Helper()
	rs := append([]Record(nil), legacy...)
	for i := range n {
		r, err := c.Next(last, Event{At: t0.Add(time.Duration(i) * time.Minute), Action: Refresh, Outcome: Success, Workspace: "w", Client: client1})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
		if last, err = c.Link(r); err != nil {
			t.Fatal(err)
		}
	}
	return rs, Head{Workspace: "w", Last: last}
}

// rehash relinks rs from record from on as a database writer can: with
// SHA-256, or under a key of its own, and returns the head it makes.
func rehash(t *testing.T, c *Chain, rs []Record, from int) Head {
	t.Helper()
	last := Link{}
	if from > 0 {
		last, _ = (&Chain{}).Link(rs[from-1])
		if rs[from-1].Keyed {
			t.Fatal("rehash starts after a keyed record, whose link the writer cannot compute")
		}
	}
	for i := from; i < len(rs); i++ {
		rs[i].Prev, rs[i].Keyed = last.Hash, c.Keyed()
		var err error
		if last, err = c.Link(rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return Head{Workspace: "w", Last: last}
}

func TestKeyedChain(t *testing.T) {
	key := NewChain([]byte("the chain's key, from the keeper"))
	forged := NewChain([]byte("a key the writer made up"))
	tests := []struct {
		name   string
		build  func(t *testing.T) ([]Record, Head, *Chain, Link)
		seq    int64
		reason string
	}{
		{"keyed, intact", func(t *testing.T) ([]Record, Head, *Chain, Link) {
			rs, h := keyedChain(t, key, nil, Link{}, 4)
			return rs, h, key, Link{}
		}, 0, ""},
		{"unkeyed records, then keyed ones", func(t *testing.T) ([]Record, Head, *Chain, Link) {
			legacy, lh := chain(t, "w", Link{}, 3)
			rs, h := keyedChain(t, key, legacy, lh.Last, 3)
			return rs, h, key, Link{}
		}, 0, ""},
		{"a keyed chain read without the key", func(t *testing.T) ([]Record, Head, *Chain, Link) {
			rs, h := keyedChain(t, key, nil, Link{}, 2)
			return rs, h, nil, Link{}
		}, 1, "needs the chain's key"},
		{"a record rewritten and every later one rehashed", func(t *testing.T) ([]Record, Head, *Chain, Link) {
			rs, _ := keyedChain(t, key, nil, Link{}, 4)
			rs[1].Client = "b1b2c3d4-0000-4000-8000-000000000000"
			return rs, rehash(t, forged, rs, 0), key, Link{}
		}, 2, "prev is not the hash of record 1"},
		{"an unkeyed record rewritten under the first keyed one", func(t *testing.T) ([]Record, Head, *Chain, Link) {
			legacy, lh := chain(t, "w", Link{}, 3)
			rs, h := keyedChain(t, key, legacy, lh.Last, 2)
			rs[0].Outcome = Denied
			rehash(t, &Chain{}, rs[:3], 0)
			return rs, h, key, Link{}
		}, 4, "prev is not the hash of record 3"},
		{"the whole chain rewritten without the key", func(t *testing.T) ([]Record, Head, *Chain, Link) {
			rs, _ := keyedChain(t, key, nil, Link{}, 4)
			seen, _ := key.Link(rs[3])
			rs[2].Outcome = Failed
			return rs, rehash(t, &Chain{}, rs, 0), key, seen
		}, 4, "not the one a checkpoint saw"},
		{"an unkeyed record after keyed ones", func(t *testing.T) ([]Record, Head, *Chain, Link) {
			rs, h := keyedChain(t, key, nil, Link{}, 2)
			r, _ := (&Chain{}).Next(h.Last, Event{At: t0.Add(time.Hour), Action: Refresh, Outcome: Success, Workspace: "w"})
			return append(rs, r), Head{Workspace: "w", Last: r.Link()}, key, Link{}
		}, 3, "without the chain's key"},
		{"the last record deleted and the head moved back, unseen", func(t *testing.T) ([]Record, Head, *Chain, Link) {
			rs, _ := keyedChain(t, key, nil, Link{}, 4)
			last, _ := key.Link(rs[2])
			return rs[:3], Head{Workspace: "w", Last: last}, key, Link{}
		}, 0, ""},
		{"the last record deleted and the head moved back, after a checkpoint", func(t *testing.T) ([]Record, Head, *Chain, Link) {
			rs, h := keyedChain(t, key, nil, Link{}, 4)
			last, _ := key.Link(rs[2])
			return rs[:3], Head{Workspace: "w", Last: last}, key, h.Last
		}, 4, "a checkpoint saw the chain reach record 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, h, c, seen := tt.build(t)
			v := NewVerifier(h, c)
			v.Expect(seen, time.Time{})
			for _, r := range rs {
				if v.Add(r) != nil {
					break
				}
			}
			err := v.Close()
			var b *Break
			switch {
			case tt.seq == 0 && err != nil:
				t.Fatalf("the chain does not verify: %v", err)
			case tt.seq != 0 && (!errors.As(err, &b) || b.Seq != tt.seq || !strings.Contains(b.Reason, tt.reason)):
				t.Fatalf("break %v, want one at record %d about %q", err, tt.seq, tt.reason)
			}
		})
	}
}

func TestChainSum(t *testing.T) {
	key := NewChain([]byte("k"))
	rs, _ := keyedChain(t, key, nil, Link{}, 1)
	want, _ := key.Hash(rs[0])
	if got, err := key.Sum(rs[0].Canonical()); err != nil || got != want {
		t.Fatalf("Sum = %x, %v; want the record's link", got, err)
	}
	if _, err := (*Chain)(nil).Sum(rs[0].Canonical()); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Sum without the key: %v", err)
	}
	if back, err := Parse(rs[0].Canonical()); err != nil || !back.Keyed {
		t.Fatalf("a keyed record parses back as %+v, %v", back, err)
	}
}
