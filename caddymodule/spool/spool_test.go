package spool

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
)

func TestSpool(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1000) // 16 000 bytes
	tests := []struct {
		name      string
		threshold int64
		hint      int64
		chunk     int
		wantDisk  bool
	}{
		{"memory", 1 << 20, 0, 1000, false},
		{"memory, reserved", 1 << 20, 16000, 1000, false},
		{"exactly the threshold stays in memory", 16000, 0, 1600, false},
		{"spills mid-way", 5000, 0, 999, true},
		{"spills at once", 10, 0, 4096, true},
		{"a large hint goes to disk from the first byte", 15000, 16000, 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := New(tt.threshold, dir, tt.hint)
			for off := 0; off < len(data); off += tt.chunk {
				if _, err := s.Write(data[off:min(off+tt.chunk, len(data))]); err != nil {
					t.Fatal(err)
				}
				if _, inMem := s.InMemory(); tt.hint > tt.threshold && inMem {
					t.Fatalf("held %d bytes in memory though the hint said disk", s.size)
				}
			}
			mem, inMem := s.InMemory()
			if inMem == tt.wantDisk {
				t.Fatalf("in memory = %v", inMem)
			}
			if inMem && !bytes.Equal(mem, data) {
				t.Fatal("the bytes in memory are not the ones written")
			}
			if !inMem && (s.mem != nil || mem != nil) {
				t.Fatal("a spilled spool still holds the bytes in memory")
			}
			got, err := io.ReadAll(io.NewSectionReader(s, 0, int64(len(data))))
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes, %v", len(got), err)
			}
			// The spool file is unlinked from the start: nothing in dir.
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("spool left files: %v", entries)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSpoolWriteFailure(t *testing.T) {
	s := New(1, "/nonexistent-dir-for-hdc-test", 0)
	_, err := s.Write([]byte("xx"))
	var se *Error
	if err == nil || !errors.As(err, &se) {
		t.Fatalf("err = %v, want a spool.Error", err)
	}
}
