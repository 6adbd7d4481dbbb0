// Package kidfilter is the key plane's filter of kids: a Bloom filter of
// every kid the backend holds, which the backend builds and each edge
// loads, then keeps current with the change feed, so that an edge tells a
// kid that does not exist from one it has not cached without asking the
// backend. A kid the filter rules out certainly is not a key; one it lets
// through may be a false positive, at the rate FalsePositiveRate while the
// filter holds no more kids than it was sized for.
//
// The filter is github.com/bits-and-blooms/bloom/v3's, whose binary form
// travels between the backend and the edges.
package kidfilter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/bits-and-blooms/bloom/v3"
	"github.com/health-data-connect/hdc/internal/contract"
)

// FalsePositiveRate is the rate a filter is sized for.
const FalsePositiveRate = 0.01

// minCapacity is the fewest kids a filter is sized for.
const minCapacity = 10_000

// Filter is a Bloom filter of kids, safe for concurrent use.
type Filter struct {
	mu       sync.RWMutex
	bloom    *bloom.BloomFilter
	capacity uint // the kids it was sized for
	count    uint // the kids added
}

// New returns an empty filter sized for twice n kids, and 10,000 at least,
// so that the keys added after it was built keep its rate for a while.
func New(n int) *Filter {
	capacity := max(2*uint(max(n, 0)), minCapacity)
	return &Filter{bloom: bloom.NewWithEstimates(capacity, FalsePositiveRate), capacity: capacity}
}

// Add adds kid.
func (f *Filter) Add(kid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bloom.AddString(kid)
	f.count++
}

// MayHold reports whether kid may be in the filter: false means it was
// never added.
func (f *Filter) MayHold(kid string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.bloom.TestString(kid)
}

// Full reports whether more kids were added than the filter was sized
// for: its rate of false positives is then over FalsePositiveRate, and it
// should be built again.
func (f *Filter) Full() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.count > f.capacity
}

// Size is the filter's memory in bytes: its bits.
func (f *Filter) Size() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return int(f.bloom.Cap() / 8)
}

// Wire returns f as the key plane's answer carries it, the filter of the
// kids changed through the change number last.
func (f *Filter) Wire(last int64) (contract.KeyFilter, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	b, err := f.bloom.MarshalBinary()
	return contract.KeyFilter{Bloom: b, Capacity: f.capacity, Count: f.count, Last: last}, err
}

// FromWire reads a filter from the key plane's answer.
func FromWire(w contract.KeyFilter) (*Filter, error) {
	if !wellFormed(w.Bloom) {
		return nil, errors.New("kidfilter: not a filter of the key plane")
	}
	b := new(bloom.BloomFilter)
	if err := b.UnmarshalBinary(w.Bloom); err != nil {
		return nil, fmt.Errorf("kidfilter: %w", err)
	}
	if b.Cap() == 0 || b.K() == 0 || w.Capacity < minCapacity {
		return nil, errors.New("kidfilter: not a filter of the key plane")
	}
	return &Filter{bloom: b, capacity: w.Capacity, count: w.Count}, nil
}

// wellFormed checks the bloom package's binary form before it is read:
// m and k, then the bit set (its length in bits, m, and m/64 words, big
// endian). The bit set's reader allocates the words its length declares,
// and panics on a length it cannot allocate, whatever the data.
func wellFormed(b []byte) bool {
	if len(b) < 24 {
		return false
	}
	m, k, length := binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b[16:])
	words := (m + 63) / 64
	return m > 0 && k > 0 && k <= 64 && length == m && words <= uint64(len(b)-24)/8 && uint64(len(b)) == 24+8*words
}
