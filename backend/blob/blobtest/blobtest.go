// Package blobtest is the conformance suite of blob.Store. Every
// implementation runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		blobtest.Run(t, func(t *testing.T) blob.Store { return openEmpty(t) })
//	}
//
// open must return an empty store and arrange its cleanup.
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/health-data-connect/hdc/backend/blob"
)

// Run runs the whole suite; each subtest gets a fresh store from open.
func Run(t *testing.T, open func(t *testing.T) blob.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s blob.Store)
	}{
		{"PutOpen", testPutOpen},
		{"Large", testLarge},
		{"Empty", testEmpty},
		{"InvalidKeys", testInvalidKeys},
		{"FailedPut", testFailedPut},
		{"CanceledPut", testCanceledPut},
		{"ConcurrentPuts", testConcurrentPuts},
		{"SweepKeepsLivePuts", testSweepKeepsLivePuts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

func keyOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// put stores content and checks the key and size Put reports.
func put(t *testing.T, s blob.Store, content []byte) string {
	t.Helper()
	key, size, err := s.Put(t.Context(), bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if key != keyOf(content) || size != int64(len(content)) {
		t.Fatalf("Put = %q, %d; want %q, %d", key, size, keyOf(content), len(content))
	}
	return key
}

// read opens key and returns its content.
func read(t *testing.T, s blob.Store, key string) []byte {
	t.Helper()
	rc, err := s.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("Open(%s): %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantNotFound(t *testing.T, s blob.Store, key string) {
	t.Helper()
	if rc, err := s.Open(t.Context(), key); !errors.Is(err, blob.ErrNotFound) {
		if err == nil {
			rc.Close()
		}
		t.Fatalf("Open(%q) = %v, want ErrNotFound", key, err)
	}
}

func testPutOpen(t *testing.T, s blob.Store) {
	content := []byte("hello, blobs")
	wantNotFound(t, s, keyOf(content))
	for range 2 { // the second Put finds the blob in place
		put(t, s, content)
	}
	if got := read(t, s, keyOf(content)); !bytes.Equal(got, content) {
		t.Fatalf("Open read %q, want %q", got, content)
	}
	other := []byte("another blob")
	put(t, s, other)
	if got := read(t, s, keyOf(other)); !bytes.Equal(got, other) {
		t.Fatalf("Open read %q, want %q", got, other)
	}
}

// testLarge stores a blob of several MiB fed in odd-sized chunks.
func testLarge(t *testing.T, s blob.Store) {
	content := make([]byte, 5<<20+7)
	for i := range content {
		content[i] = byte(i * 7 % 251)
	}
	key, size, err := s.Put(t.Context(), iotest.HalfReader(bytes.NewReader(content)))
	if err != nil || key != keyOf(content) || size != int64(len(content)) {
		t.Fatalf("Put = %q, %d, %v", key, size, err)
	}
	if got := read(t, s, key); !bytes.Equal(got, content) {
		t.Fatalf("read back %d bytes that differ from the %d stored", len(got), len(content))
	}
}

func testEmpty(t *testing.T, s blob.Store) {
	key := put(t, s, nil)
	if got := read(t, s, key); len(got) != 0 {
		t.Fatalf("the empty blob reads %q", got)
	}
}

func testInvalidKeys(t *testing.T, s blob.Store) {
	key := put(t, s, []byte("x"))
	for _, k := range []string{"", "../../etc/passwd", strings.ToUpper(key), key[:63], key + "0", key[:63] + "/"} {
		wantNotFound(t, s, k)
	}
}

// testFailedPut feeds a reader that fails midway: the error comes back as
// is and nothing is stored under the part that was read.
func testFailedPut(t *testing.T, s blob.Store) {
	boom := errors.New("boom")
	_, _, err := s.Put(t.Context(), io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("Put = %v, want the reader's error", err)
	}
	wantNotFound(t, s, keyOf([]byte("partial")))
}

func testCanceledPut(t *testing.T, s blob.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := s.Put(ctx, strings.NewReader("late")); err == nil {
		t.Fatal("Put with a canceled context succeeded")
	}
	wantNotFound(t, s, keyOf([]byte("late")))
}

// testConcurrentPuts stores one blob from several goroutines at once, as
// replicas receiving the same file do.
func testConcurrentPuts(t *testing.T, s blob.Store) {
	content := bytes.Repeat([]byte("same file "), 10000)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() { _, _, errs[i] = s.Put(t.Context(), bytes.NewReader(content)) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := read(t, s, keyOf(content)); !bytes.Equal(got, content) {
		t.Fatal("concurrent puts of one blob left other content")
	}
}

// testSweepKeepsLivePuts: sweeping staged files while a Put is writing
// keeps that Put's file, and the Put completes.
func testSweepKeepsLivePuts(t *testing.T, s blob.Store) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, _, err := s.Put(t.Context(), pr)
		done <- err
	}()
	if _, err := pw.Write([]byte("half of a file, ")); err != nil { // the Put has staged its file
		t.Fatal(err)
	}
	n, err := s.SweepStaged()
	if err != nil || n != 0 {
		t.Fatalf("SweepStaged = %d, %v during a Put", n, err)
	}
	_, _ = pw.Write([]byte("then the rest"))
	pw.Close()
	if err := <-done; err != nil {
		t.Fatalf("the Put after a sweep: %v", err)
	}
	content := []byte("half of a file, then the rest")
	got := read(t, s, keyOf(content))
	if !bytes.Equal(got, content) {
		t.Fatalf("stored %q", got)
	}
}
