package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// Ids of the audit events.
const (
	clientA = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
	clientB = "6b2dab63-4c8f-4e1f-8054-3f9f2d7c8b02"
	care1   = "9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"
	care2   = "0f9e8d7c-6b5a-4493-8827-1a2b3c4d5e04"
)

// operatorAlice is an operator, as her certificate names her.
var operatorAlice = audit.Person{Name: "alice@example.org", Serial: "0a1b", Role: contract.RoleOperator}

// retrieval is client's read of care in ws, d after t0.
func retrieval(ws, client, care string, d time.Duration) audit.Event {
	return audit.Event{
		At: at(d), Action: audit.RecordRetrieve, Outcome: audit.Success, Workspace: ws, Client: client,
		Entity: audit.Entity{Kind: audit.EntityCareContext, ID: care}, Source: netip.MustParseAddr("203.0.113.9"),
	}
}

// appendN appends n retrievals to ws, a minute apart from d.
func appendN(t *testing.T, s Store, ws string, d time.Duration, n int) []audit.Record {
	t.Helper()
	var rs []audit.Record
	for i := range n {
		r, err := s.AppendAudit(ctx(t), retrieval(ws, clientA, care1, d+time.Duration(i)*time.Minute))
		must(t, err)
		rs = append(rs, r)
	}
	return rs
}

func listAudit(t *testing.T, s Store, f store.AuditFilter) []audit.Record {
	t.Helper()
	rs, err := s.ListAudit(ctx(t), f)
	must(t, err)
	return rs
}

// head returns the head of ws's chain, an empty one when it has none.
func head(t *testing.T, s Store, ws string) audit.Head {
	t.Helper()
	hs, err := s.AuditHeads(ctx(t))
	must(t, err)
	for _, h := range hs {
		if h.Workspace == ws {
			return h
		}
	}
	return audit.Head{Workspace: ws}
}

func verifyAudit(t *testing.T, s Store, ws string) error {
	t.Helper()
	return store.VerifyAudit(ctx(t), s, head(t, s, ws), store.AuditCheck{})
}

// sameRecords reports whether got and want are the same records, by their
// canonical forms.
func sameRecords(t *testing.T, got, want []audit.Record) {
	t.Helper()
	c := func(rs []audit.Record) [][]byte {
		var out [][]byte
		for _, r := range rs {
			out = append(out, r.Canonical())
		}
		return out
	}
	if !slices.EqualFunc(c(got), c(want), bytes.Equal) {
		t.Fatalf("records\n got %s\nwant %s", c(got), c(want))
	}
}

func testAuditAppend(t *testing.T, s Store) {
	var w1, w2 []audit.Record
	for i := range 3 {
		w1 = append(w1, appendN(t, s, "w1", time.Duration(i)*time.Minute, 1)...)
		if i < 2 {
			w2 = append(w2, appendN(t, s, "w2", time.Duration(i)*time.Minute, 1)...)
		}
	}
	failed, err := s.AppendAudit(ctx(t), audit.Event{At: t0, Action: audit.LoginFailed, Outcome: audit.Denied})
	must(t, err)
	for i := 1; i < len(w1); i++ {
		if prev, r := w1[i-1].Link(), w1[i]; r.Seq != prev.Seq+1 || r.Prev != prev.Hash {
			t.Fatalf("record %d: seq %d, prev %v; want %d, %v", i+1, r.Seq, r.Prev, prev.Seq+1, prev.Hash)
		}
	}
	if !w1[0].At.Equal(at(0)) || w1[0].Prev != (audit.Hash{}) || w2[0].Seq != 1 || failed.Seq != 1 {
		t.Fatalf("first records %+v, %+v, %+v; want seq 1, zero prev, time in microseconds", w1[0], w2[0], failed)
	}
	sameRecords(t, listAudit(t, s, store.AuditFilter{Workspace: "w1"}), w1)
	sameRecords(t, listAudit(t, s, store.AuditFilter{Workspace: "w2"}), w2)
	sameRecords(t, listAudit(t, s, store.AuditFilter{}), []audit.Record{failed})

	bad := retrieval("w1", "not-a-uuid", care1, time.Hour)
	if _, err := s.AppendAudit(ctx(t), bad); err == nil {
		t.Fatal("AppendAudit accepted a client id that is not a UUID")
	}
	hs, err := s.AuditHeads(ctx(t))
	must(t, err)
	want := []audit.Head{{Last: failed.Link()}, {Workspace: "w1", Last: w1[2].Link()}, {Workspace: "w2", Last: w2[1].Link()}}
	if !slices.Equal(hs, want) {
		t.Fatalf("AuditHeads() = %+v, want %+v (the invalid event changed nothing)", hs, want)
	}
	for _, ws := range []string{"", "w1", "w2"} {
		must(t, verifyAudit(t, s, ws))
	}
}

func testAuditList(t *testing.T, s Store) {
	for _, e := range []audit.Event{
		retrieval("w1", clientA, care1, 0),
		retrieval("w1", clientB, care2, time.Minute),
		retrieval("w1", clientA, care2, 2*time.Minute),
		{At: at(3 * time.Minute), Action: audit.Login, Outcome: audit.Success, Workspace: "w1", Client: clientA},
		retrieval("w2", clientA, care1, time.Minute),
		{At: at(4 * time.Minute), Action: audit.ClientDisable, Outcome: audit.Success, Workspace: "w1",
			Entity: audit.Entity{Kind: audit.EntityClient, ID: clientB}, Person: operatorAlice},
		// Appended late: at the time of seq 3, and before seq 2's.
		{At: at(2 * time.Minute), Action: audit.Login, Outcome: audit.Success, Workspace: "w1", Client: clientB},
		{At: at(30 * time.Second), Action: audit.Login, Outcome: audit.Success, Workspace: "w1", Client: clientB},
	} {
		_, err := s.AppendAudit(ctx(t), e)
		must(t, err)
	}
	tests := []struct {
		name string
		f    store.AuditFilter
		want []int64
	}{
		{"all", store.AuditFilter{Workspace: "w1"}, []int64{1, 2, 3, 4, 5, 6, 7}},
		{"since", store.AuditFilter{Workspace: "w1", Since: at(time.Minute)}, []int64{2, 3, 4, 5, 6}},
		{"since, in nanoseconds", store.AuditFilter{Workspace: "w1", Since: at(time.Minute).Add(500)}, []int64{2, 3, 4, 5, 6}},
		{"until", store.AuditFilter{Workspace: "w1", Until: at(2 * time.Minute)}, []int64{1, 2, 7}},
		{"since, to the end", store.AuditFilter{Workspace: "w1", Since: at(3 * time.Minute)}, []int64{4, 5}},
		{"between", store.AuditFilter{Workspace: "w1", Since: at(time.Minute), Until: at(3 * time.Minute)}, []int64{2, 3, 6}},
		{"entity", store.AuditFilter{Workspace: "w1", Entity: care2}, []int64{2, 3}},
		{"agent", store.AuditFilter{Workspace: "w1", Agent: clientA}, []int64{1, 3, 4}},
		{"agent and entity", store.AuditFilter{Workspace: "w1", Agent: clientA, Entity: care1}, []int64{1}},
		{"a person as the agent", store.AuditFilter{Workspace: "w1", Agent: operatorAlice.Name}, []int64{5}},
		{"a person and the entity", store.AuditFilter{Workspace: "w1", Agent: operatorAlice.Name, Entity: clientB}, []int64{5}},
		{"another person", store.AuditFilter{Workspace: "w1", Agent: "bob@example.org"}, nil},
		{"after", store.AuditFilter{Workspace: "w1", After: 2}, []int64{3, 4, 5, 6, 7}},
		{"limit", store.AuditFilter{Workspace: "w1", Limit: 2}, []int64{1, 2}},
		{"page", store.AuditFilter{Workspace: "w1", After: 1, Limit: 2}, []int64{2, 3}},
		{"past the end", store.AuditFilter{Workspace: "w1", After: 7}, nil},
		{"another workspace", store.AuditFilter{Workspace: "w2", Entity: care1}, []int64{1}},
		{"no such workspace", store.AuditFilter{Workspace: "w3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int64
			for _, r := range listAudit(t, s, tt.f) {
				if r.Workspace != tt.f.Workspace {
					t.Fatalf("record of workspace %q listed for %q", r.Workspace, tt.f.Workspace)
				}
				got = append(got, r.Seq)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("seqs %v, want %v", got, tt.want)
			}
		})
	}
}

// testAuditListNewest: ListAuditNewest merges every chain newest first
// (time, then workspace, then seq), records appended late with an older
// time or a time another record has among them, from a place on, by the
// same filters as ListAudit; or reads one chain so.
func testAuditListNewest(t *testing.T, s Store) {
	for _, e := range []audit.Event{
		retrieval("w1", clientA, care1, 0),
		retrieval("w1", clientA, care2, time.Minute),
		retrieval("w1", clientA, care1, 2*time.Minute),
		retrieval("w2", clientB, care1, time.Minute),
		retrieval("w1", clientB, care2, 2*time.Minute),
		retrieval("w1", clientA, care2, 30*time.Second),
		retrieval("w2", clientB, care2, 2*time.Minute),
		{At: at(2 * time.Minute), Action: audit.LoginFailed, Outcome: audit.Denied},
	} {
		_, err := s.AppendAudit(ctx(t), e)
		must(t, err)
	}
	every := func(f store.AuditFilter) store.AuditFilter { f.Every = true; return f }
	place := func(ws string, seq int64) store.AuditPlace {
		return store.AuditPlace{At: at(2 * time.Minute), Workspace: ws, Seq: seq}
	}
	for _, tt := range []struct {
		name string
		f    store.AuditFilter
		want string
	}{
		{"every chain", every(store.AuditFilter{}), "/1 w1/4 w1/3 w2/2 w1/2 w2/1 w1/5 w1/1"},
		{"a page", every(store.AuditFilter{Limit: 3}), "/1 w1/4 w1/3"},
		{"after the installation's", every(store.AuditFilter{Before: place("", 1)}), "w1/4 w1/3 w2/2 w1/2 w2/1 w1/5 w1/1"},
		{"after w1/4", every(store.AuditFilter{Before: place("w1", 4)}), "w1/3 w2/2 w1/2 w2/1 w1/5 w1/1"},
		{"after w1/3, two", every(store.AuditFilter{Before: place("w1", 3), Limit: 2}), "w2/2 w1/2"},
		{"an agent", every(store.AuditFilter{Agent: clientB}), "w1/4 w2/2 w2/1"},
		{"an entity", every(store.AuditFilter{Entity: care2}), "w1/4 w2/2 w1/2 w1/5"},
		{"since and until", every(store.AuditFilter{Since: at(time.Minute), Until: at(2 * time.Minute)}), "w1/2 w2/1"},
		{"one chain", store.AuditFilter{Workspace: "w1"}, "w1/4 w1/3 w1/2 w1/5 w1/1"},
		{"one chain, after w1/4", store.AuditFilter{Workspace: "w1", Before: place("w1", 4)}, "w1/3 w1/2 w1/5 w1/1"},
		{"the installation's", store.AuditFilter{}, "/1"},
		{"no such chain", store.AuditFilter{Workspace: "w3"}, ""},
	} {
		rs, err := s.ListAuditNewest(ctx(t), tt.f)
		must(t, err)
		var got []string
		for _, r := range rs {
			got = append(got, fmt.Sprintf("%s/%d", r.Workspace, r.Seq))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s: %v, want %s", tt.name, got, tt.want)
		}
	}
}

// testAuditTransaction appends in a transaction that fails afterwards:
// the record goes with it, as a change's record goes with the change.
func testAuditTransaction(t *testing.T, s Store) {
	boom := errors.New("the change failed")
	_, err := s.AppendAuditThen(ctx(t), retrieval("w1", clientA, care1, 0), func() error { return boom })
	wantErr(t, err, boom)
	if rs := listAudit(t, s, store.AuditFilter{Workspace: "w1"}); len(rs) != 0 {
		t.Fatalf("a rolled back transaction left %d records", len(rs))
	}
	for i := range 2 {
		r, err := s.AppendAuditThen(ctx(t), retrieval("w1", clientA, care1, time.Duration(i)*time.Minute), func() error { return nil })
		must(t, err)
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i+1, r.Seq)
		}
	}
	_, err = s.AppendAuditThen(ctx(t), retrieval("w1", clientA, care1, time.Hour), func() error { return boom })
	wantErr(t, err, boom)
	if h := head(t, s, "w1"); h.Last.Seq != 2 {
		t.Fatalf("head at record %d after a rolled back third append, want 2", h.Last.Seq)
	}
	must(t, verifyAudit(t, s, "w1"))
}

// testAuditTamper changes rows behind the store's back: verification
// names the first break.
func testAuditTamper(t *testing.T, s Store) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, ws string, rs []audit.Record)
		seq    int64 // the break, 0 for none
		reason string
	}{
		{"intact", func(*testing.T, string, []audit.Record) {}, 0, ""},
		{"altered", func(t *testing.T, ws string, rs []audit.Record) {
			r := rs[1]
			r.Outcome = audit.Denied
			must(t, s.SetAuditBody(ctx(t), ws, 2, r.Canonical()))
		}, 3, "prev is not the hash of record 2"},
		{"last altered", func(t *testing.T, ws string, rs []audit.Record) {
			r := rs[4]
			r.Outcome = audit.Denied
			must(t, s.SetAuditBody(ctx(t), ws, 5, r.Canonical()))
		}, 5, "head"},
		{"a row's time moved", func(t *testing.T, ws string, rs []audit.Record) {
			must(t, s.SetAuditColumns(ctx(t), ws, 2, time.Unix(0, 0), rs[1].Client))
		}, 2, "columns are not the record's"},
		{"a row's client changed", func(t *testing.T, ws string, rs []audit.Record) {
			must(t, s.SetAuditColumns(ctx(t), ws, 4, rs[3].At, clientB))
		}, 4, "columns are not the record's"},
		{"deleted", func(t *testing.T, ws string, _ []audit.Record) { must(t, s.DeleteAuditRecord(ctx(t), ws, 3)) }, 3, "missing"},
		{"last deleted", func(t *testing.T, ws string, _ []audit.Record) { must(t, s.DeleteAuditRecord(ctx(t), ws, 5)) }, 5, "missing at the end"},
		{"not a record", func(t *testing.T, ws string, _ []audit.Record) {
			must(t, s.SetAuditBody(ctx(t), ws, 2, []byte(`{"v":1}`)))
		}, 2, "stored record"},
		{"record of another row", func(t *testing.T, ws string, rs []audit.Record) {
			must(t, s.SetAuditBody(ctx(t), ws, 4, rs[1].Canonical()))
		}, 4, "columns are not the record's"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := fmt.Sprint("t", i)
			rs := appendN(t, s, ws, 0, 5)
			tt.tamper(t, ws, rs)
			err := verifyAudit(t, s, ws)
			if tt.seq == 0 {
				must(t, err)
				return
			}
			var b *audit.Break
			if !errors.As(err, &b) || b.Seq != tt.seq || b.Workspace != ws || !strings.Contains(b.Reason, tt.reason) {
				t.Fatalf("verify = %v, want a break of %s at record %d about %q", err, ws, tt.seq, tt.reason)
			}
		})
	}
}

// prune prunes ws to before at an hour past t0, or at before when later:
// a prune never removes records to a bound after its own time.
func prune(t *testing.T, s Store, ws string, before time.Time, want int64) {
	t.Helper()
	now := at(time.Hour)
	if before.After(now) {
		now = before
	}
	n, err := s.PruneAudit(ctx(t), ws, before, now)
	must(t, err)
	if n != want {
		t.Fatalf("PruneAudit removed %d records, want %d", n, want)
	}
	must(t, verifyAudit(t, s, ws))
}

func testAuditPrune(t *testing.T, s Store) {
	rs := appendN(t, s, "w1", 0, 5)
	prune(t, s, "w1", at(2*time.Minute), 2)
	list := listAudit(t, s, store.AuditFilter{Workspace: "w1"})
	p := list[len(list)-1]
	want := audit.Pruned{From: 1, Last: rs[1].Link(), Before: at(2 * time.Minute)}
	if len(list) != 4 || list[0].Seq != 3 || p.Action != audit.RetentionPrune || p.Pruned != want || !p.At.Equal(at(time.Hour)) {
		t.Fatalf("after pruning records 1 and 2: %+v; want records 3 to 5 and a prune record naming %+v", list, want)
	}
	if h := head(t, s, "w1"); h.Pruned != want.Last || h.Last != p.Link() {
		t.Fatalf("head %+v, want pruned %+v and last %+v", h, want.Last, p.Link())
	}
	prune(t, s, "w1", at(2*time.Minute), 0)
	if h := head(t, s, "w1"); h.Last.Seq != 6 {
		t.Fatalf("a prune that removed nothing appended a record: head %+v", h)
	}
	prune(t, s, "w1", at(4*time.Minute), 2)
	prune(t, s, "w1", at(2*time.Hour), 3) // record 5 and both prune records
	if list := listAudit(t, s, store.AuditFilter{Workspace: "w1"}); len(list) != 1 || list[0].Seq != 8 || list[0].Pruned.From != 5 {
		t.Fatalf("after pruning everything: %+v, want the prune record of records 5 to 7 alone", list)
	}
	prune(t, s, "nope", at(2*time.Hour), 0)
}

// testAuditPruneGap prunes a chain with a record deleted: the prefix is
// not removed, so that the evidence stays.
func testAuditPruneGap(t *testing.T, s Store) {
	appendN(t, s, "w1", 0, 4)
	must(t, s.DeleteAuditRecord(ctx(t), "w1", 2))
	_, err := s.PruneAudit(ctx(t), "w1", at(time.Hour), at(time.Hour))
	var b *audit.Break
	if !errors.As(err, &b) || b.Seq != 2 {
		t.Fatalf("PruneAudit over a gap = %v, want a break at record 2", err)
	}
	if list := listAudit(t, s, store.AuditFilter{Workspace: "w1"}); len(list) != 3 || head(t, s, "w1").Pruned != (audit.Link{}) {
		t.Fatalf("the refused prune changed the chain: %+v", list)
	}
}

// testAuditPruneByRecords: what has expired is decided from the records'
// own times. A writer of the database who moves the time column of a
// trail's first rows into 1970 makes nothing expire; one who rewrites an
// expired record's body, its successor's link no longer its own, makes
// the prune refuse, naming it, and remove nothing.
func testAuditPruneByRecords(t *testing.T, s Store) {
	rs := appendN(t, s, "w1", 0, 4)
	for _, r := range rs[:3] {
		must(t, s.SetAuditColumns(ctx(t), "w1", r.Seq, time.Unix(0, 0), r.Client))
	}
	if n, err := s.PruneAudit(ctx(t), "w1", at(-time.Minute), at(time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneAudit with the columns moved back = %d, %v; want nothing removed", n, err)
	}
	altered := rs[1]
	altered.At = at(-time.Hour)
	must(t, s.SetAuditBody(ctx(t), "w1", 2, altered.Canonical()))
	_, err := s.PruneAudit(ctx(t), "w1", at(time.Minute/2), at(time.Hour))
	var b *audit.Break
	if !errors.As(err, &b) || b.Seq != 3 || !strings.Contains(b.Reason, "prev") {
		t.Fatalf("PruneAudit past an altered record = %v, want a break at record 3, whose prev is not record 2's link", err)
	}
	if h := head(t, s, "w1"); h.Pruned != (audit.Link{}) || h.Last.Seq != 4 {
		t.Fatalf("the refused prune changed the chain: head %+v", h)
	}
}

// appendConcurrently appends n events to w1 from each of workers
// goroutines, spread over stores, and checks the chain: seqs 1 to the
// total, without gaps, and a chain that verifies.
func appendConcurrently(t *testing.T, stores []Store, workers, n int) {
	var wg sync.WaitGroup
	for i := range workers {
		s := stores[i%len(stores)]
		wg.Go(func() {
			for j := range n {
				if _, err := s.AppendAudit(ctx(t), retrieval("w1", clientA, care1, time.Duration(i*n+j)*time.Second)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, s := range stores {
		list := listAudit(t, s, store.AuditFilter{Workspace: "w1"})
		for i, r := range list {
			if r.Seq != int64(i+1) {
				t.Fatalf("record %d has seq %d: the seqs have a gap or a repeat", i+1, r.Seq)
			}
		}
		if len(list) != workers*n {
			t.Fatalf("%d records, want %d", len(list), workers*n)
		}
		must(t, verifyAudit(t, s, "w1"))
	}
}

func testAuditConcurrentAppends(t *testing.T, s Store) {
	appendConcurrently(t, []Store{s}, 6, 15)
}

// testReplicaAudit appends to one workspace from both replicas at once.
func testReplicaAudit(t *testing.T, a, b Store) {
	appendConcurrently(t, []Store{a, b}, 6, 15)
}

// BenchAppendAudit measures AppendAudit on s, one chain.
func BenchAppendAudit(b *testing.B, s store.Audit) {
	e := retrieval("w1", clientA, care1, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.AppendAudit(b.Context(), e); err != nil {
			b.Fatal(err)
		}
	}
}
