package audit

import (
	"net/netip"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	first := mustNext(t, Link{}, retrieve())
	if first.Seq != 1 || first.Prev != (Hash{}) {
		t.Fatalf("first record: seq %d, prev %v; want 1 and zero", first.Seq, first.Prev)
	}
	e := retrieve()
	e.At = t0.In(time.FixedZone("IST", 19800))
	e.Source = netip.MustParseAddr("::ffff:203.0.113.9")
	second := mustNext(t, first.Link(), e)
	if second.Seq != 2 || second.Prev != first.Hash() {
		t.Fatalf("second record: seq %d, prev %v; want 2 and %v", second.Seq, second.Prev, first.Hash())
	}
	if want := t0.Truncate(time.Microsecond); second.At != want {
		t.Fatalf("time %v, want %v (UTC, microseconds)", second.At, want)
	}
	if second.Source != netip.MustParseAddr("203.0.113.9") {
		t.Fatalf("source %v, want it unmapped", second.Source)
	}
	if _, err := Next(first.Link(), Event{At: t0, Action: Login}); err == nil {
		t.Fatal("Next accepted an event without outcome or workspace")
	}
}

func TestHashFrom(t *testing.T) {
	if _, err := HashFrom(make([]byte, 31)); err == nil {
		t.Fatal("HashFrom accepted 31 bytes")
	}
	h, err := HashFrom(make([]byte, 32))
	if err != nil || h != (Hash{}) {
		t.Fatalf("HashFrom(32 zero bytes) = %v, %v", h, err)
	}
}

// BenchmarkAppend is the part of an append that is not the database's:
// validating the event, making the record that follows the head, its
// canonical form and its hash.
func BenchmarkAppend(b *testing.B) {
	e := retrieve()
	var last Link
	b.ReportAllocs()
	for b.Loop() {
		r, err := Next(last, e)
		if err != nil {
			b.Fatal(err)
		}
		body := r.Canonical()
		last = Link{Seq: r.Seq, Hash: Sum(body)}
	}
}

// BenchmarkParse reads a stored record back, as a listing does.
func BenchmarkParse(b *testing.B) {
	body := mustNext(b, Link{}, retrieve()).Canonical()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}
