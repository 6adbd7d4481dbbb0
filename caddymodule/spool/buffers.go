package spool

import (
	"bytes"
	"io"
	"math/bits"
	"sync"
)

// The buffers that hold a request's body and its answer in memory (a
// spool's ciphertext, decrypted in place; the upstream's plaintext answer
// before it is encrypted) are pooled by size class, a power of two from 4 KiB
// to the default spool threshold: fresh ones were, at 1 KiB, about a
// twentieth of the bytes the edge allocated for a request, and at 64 KiB
// most of them. A buffer goes back with the bytes it held cleared, so no
// plaintext outlives its request in the pool.
const (
	minBufferClass  = 12 // 4 KiB
	bufferClasses   = 10 // to 2 MiB, the default threshold
	maxPooledBuffer = 1 << (minBufferClass + bufferClasses - 1)
)

var bufferPools [bufferClasses]sync.Pool // of *[]byte, cap exactly the class's size

// bufferClass returns the size class of a buffer of capacity n, and false
// when n is larger than the largest.
func bufferClass(n int) (int, bool) {
	if n > maxPooledBuffer {
		return 0, false
	}
	c := max(bits.Len(uint(max(n, 1)-1)), minBufferClass) - minBufferClass
	return c, true
}

// TakeBuffer returns an empty buffer with room for at least n bytes.
func TakeBuffer(n int) []byte {
	c, ok := bufferClass(n)
	if !ok {
		return make([]byte, 0, n)
	}
	if p, _ := bufferPools[c].Get().(*[]byte); p != nil {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<(c+minBufferClass))
}

// GiveBuffer clears the bytes b holds and keeps it for another request,
// when its capacity is a size class: nothing past its length was written
// since it was taken (append writes within the length; an in-place GCM
// open puts only the public tag past it). The caller must hold the only
// reference to it.
func GiveBuffer(b []byte) {
	c, ok := bufferClass(cap(b))
	if !ok || cap(b) != 1<<(c+minBufferClass) {
		return
	}
	clear(b)
	b = b[:0]
	bufferPools[c].Put(&b)
}

// PlainBody is the body of a request whose plaintext was decrypted in its
// spool's memory. The transport closes it once it has sent it, which may be
// after the handler returned; only then, and only if it was read to the
// end, does the memory go back to the pool. A body closed before its end
// (a dial that failed, say) keeps its bytes, as the reader it replaced
// did, for a retry that sends it again; the collector takes those.
type PlainBody struct {
	mu  sync.Mutex // Close may come from another goroutine than Read (HTTP/2)
	r   bytes.Reader
	mem []byte // the spool's memory, nil once given back
}

// NewPlainBody returns the body of plain, decrypted in mem, a buffer taken
// from the pool (a spool's memory), which it gives back.
func NewPlainBody(plain, mem []byte) *PlainBody {
	b := &PlainBody{mem: mem}
	b.r.Reset(plain)
	return b
}

// Read implements io.Reader.
func (b *PlainBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mem == nil {
		return 0, io.EOF
	}
	return b.r.Read(p)
}

// Close gives the memory back when the body was read to its end.
func (b *PlainBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mem != nil && b.r.Len() == 0 {
		b.r.Reset(nil)
		GiveBuffer(b.mem)
		b.mem = nil
	}
	return nil
}
