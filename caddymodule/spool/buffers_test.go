package spool

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"testing/iotest"
)

func TestBufferClass(t *testing.T) {
	for _, tc := range []struct {
		n, class int
		ok       bool
	}{
		{0, 0, true}, {1, 0, true}, {4096, 0, true}, {4097, 1, true}, {1 << 16, 4, true},
		{1<<16 + 16, 5, true}, {maxPooledBuffer, bufferClasses - 1, true}, {maxPooledBuffer + 1, 0, false},
	} {
		c, ok := bufferClass(tc.n)
		if c != tc.class || ok != tc.ok {
			t.Errorf("bufferClass(%d) = %d, %v; want %d, %v", tc.n, c, ok, tc.class, tc.ok)
		}
	}
}

// TestBuffersCleared checks that memory given back is cleared before
// another request takes it, and that memory no class fits is not kept.
func TestBuffersCleared(t *testing.T) {
	for _, n := range []int{1000, 70000} {
		b := append(TakeBuffer(n), bytes.Repeat([]byte("phi"), n/3)...)
		GiveBuffer(b)
		again := TakeBuffer(n)
		if len(again) != 0 || cap(again) < n {
			t.Fatalf("took len %d cap %d for %d bytes", len(again), cap(again), n)
		}
		if bytes.Contains(again[:cap(again)], []byte("phi")) {
			t.Errorf("%d: a pooled buffer still holds a request's bytes", n)
		}
	}
	odd := make([]byte, 5000)
	GiveBuffer(odd) // no class is 5000 bytes: left to the collector
	if got := TakeBuffer(5000); cap(got) == cap(odd) {
		t.Error("a buffer of no class's size was pooled")
	}
}

// TestPlainBody checks when a decrypted body gives its memory back: once
// read to the end and closed, not when closed early (a retry may send it
// again), and never while a Read is under way.
func TestPlainBody(t *testing.T) {
	plain := []byte(`{"resourceType":"Bundle"}`)
	for _, tc := range []struct {
		name      string
		read      int // bytes read before Close
		given     bool
		afterRead string
	}{
		{"read to the end", len(plain), true, ""},
		{"closed early", 5, false, string(plain[5:])},
		{"closed unread", 0, false, string(plain)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := append(make([]byte, 0, 4096), plain...)
			b := NewPlainBody(mem[:len(plain)], mem)
			if _, err := io.ReadFull(b, make([]byte, tc.read)); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if given := b.mem == nil; given != tc.given {
				t.Fatalf("memory given back: %v, want %v", given, tc.given)
			}
			if tc.given && !bytes.Equal(mem[:len(plain)], make([]byte, len(plain))) {
				t.Error("the memory given back still holds the plaintext")
			}
			rest, err := io.ReadAll(b)
			if err != nil || string(rest) != tc.afterRead {
				t.Errorf("read after Close: %q, %v; want %q", rest, err, tc.afterRead)
			}
		})
	}
	t.Run("Close while reading", func(t *testing.T) {
		mem := bytes.Repeat([]byte{'x'}, 4096)
		b := NewPlainBody(mem, mem)
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = io.Copy(io.Discard, iotest.OneByteReader(b)) })
		wg.Go(func() {
			for range 100 {
				_ = b.Close()
			}
		})
		wg.Wait()
	})
}
