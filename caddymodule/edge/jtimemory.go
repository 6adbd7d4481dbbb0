package edge

import (
	"hash/maphash"
	"sync"
)

// jtiMemory remembers the last (kid, jti) pairs an edge passed, up to its
// size, each as a 128-bit fingerprint under seeds of this process.
//
// It is hand-written rather than the LRU of hashicorp/golang-lru, which
// the edge used before: that keeps each entry as heap objects that point to
// one another, which the collector marks on every cycle. Full at the
// default 100,000 pairs, they made each collection cost 8–15 ms instead of
// about 1 (BenchmarkJTIMemoryGC), and an edge serving uploads of 1 MiB
// collects every few dozen requests. Neither the map's keys nor the ring
// hold a pointer, so the collector never looks inside them. Pairs leave in
// the order they came, which for pairs added once is the LRU's order too;
// none needs to expire, since a jti older than the window is refused as
// stale before the memory is asked.
type jtiMemory struct {
	seeds [2]maphash.Seed

	mu   sync.Mutex
	set  map[[2]uint64]struct{}
	ring [][2]uint64 // the pairs in the order they came, the oldest at next once full
	next int
}

func newJTIMemory(size int) *jtiMemory {
	return &jtiMemory{
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		set:   make(map[[2]uint64]struct{}, size),
		ring:  make([][2]uint64, 0, size),
	}
}

// add remembers the pair kid, jti and reports whether it was remembered
// already.
func (m *jtiMemory) add(kid, jti string) (seen bool) {
	fp := m.fingerprint(kid, jti)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, seen = m.set[fp]; seen {
		return true
	}
	if len(m.ring) < cap(m.ring) {
		m.ring = append(m.ring, fp)
	} else {
		delete(m.set, m.ring[m.next])
		m.ring[m.next] = fp
		m.next = (m.next + 1) % len(m.ring)
	}
	m.set[fp] = struct{}{}
	return false
}

// fingerprint hashes the pair under each seed. The seeds are random and
// never leave the process, so a client cannot aim at another pair's
// fingerprint; by chance two pairs share one with odds of about 2^-128
// per pair.
func (m *jtiMemory) fingerprint(kid, jti string) (fp [2]uint64) {
	for i, seed := range m.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		h.WriteString(kid)
		h.WriteByte(0)
		h.WriteString(jti)
		fp[i] = h.Sum64()
	}
	return fp
}
