package edge

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
)

func TestJTIMemory(t *testing.T) {
	type add struct {
		kid, jti string
		seen     bool
	}
	for _, tt := range []struct {
		name string
		size int
		adds []add
	}{
		{"a pair once, then again", 3, []add{{"k1", "j1", false}, {"k1", "j1", true}, {"k1", "j1", true}}},
		{"the jti under another key", 3, []add{{"k1", "j1", false}, {"k2", "j1", false}, {"k2", "j1", true}}},
		{"the kid and jti do not run into each other", 3, []add{{"k1", "j1", false}, {"k1j", "1", false}, {"k", "1j1", false}}},
		{"the oldest leaves when full", 2, []add{{"k", "a", false}, {"k", "b", false}, {"k", "c", false},
			{"k", "a", false}, {"k", "c", true}, {"k", "b", false}}},
		{"round the ring twice", 2, []add{{"k", "a", false}, {"k", "b", false}, {"k", "c", false}, {"k", "d", false},
			{"k", "e", false}, {"k", "d", true}, {"k", "e", true}, {"k", "c", false}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newJTIMemory(tt.size)
			for i, a := range tt.adds {
				if seen := m.add(a.kid, a.jti); seen != a.seen {
					t.Fatalf("add %d (%s, %s) = %v, want %v", i, a.kid, a.jti, seen, a.seen)
				}
			}
			if len(m.set) > tt.size || len(m.ring) > tt.size {
				t.Fatalf("%d pairs remembered, %d in the ring: more than %d", len(m.set), len(m.ring), tt.size)
			}
		})
	}
}

// TestJTIMemoryConcurrentReplays sends one pair from many goroutines at
// once: exactly one of them gets through.
func TestJTIMemoryConcurrentReplays(t *testing.T) {
	m := newJTIMemory(16)
	var passed atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if !m.add("k", "the-same-jti-0001") {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := passed.Load(); n != 1 {
		t.Fatalf("%d of 32 passed, want 1", n)
	}
}

// BenchmarkJTIMemoryGC measures what a full memory of jtis costs the
// collector: one runtime.GC with the default 100,000 pairs remembered, in
// the expirable LRU the edge used before and in jtiMemory, against none.
//
//	go test -run '^$' -bench JTIMemoryGC -count 3 ./caddymodule/
func BenchmarkJTIMemoryGC(b *testing.B) {
	jti := func(i int) string { return fmt.Sprintf("jti-%020d", i) }
	for _, tt := range []struct {
		name string
		fill func() any
	}{
		{"none", func() any { return nil }},
		{"jtiMemory", func() any {
			m := newJTIMemory(defaultFreshRemember)
			for i := range defaultFreshRemember {
				m.add("k-gcm", jti(i))
			}
			return m
		}},
		{"lru", func() any {
			l := expirable.NewLRU[string, struct{}](defaultFreshRemember, nil, 10*time.Minute)
			for i := range defaultFreshRemember {
				l.Add("k-gcm\x00"+jti(i), struct{}{})
			}
			return l
		}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			m := tt.fill()
			runtime.GC()
			for b.Loop() {
				runtime.GC()
			}
			runtime.KeepAlive(m)
		})
	}
}
