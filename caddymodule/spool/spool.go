// Package spool holds a request's body, or an answer, between reading it
// and using it: a spool keeps the bytes in memory up to a threshold and
// moves them to an unlinked temporary file past it, and the buffers that
// hold bytes in memory are pooled by size class and given back cleared.
// hdc_jwe spools an envelope until its tag is verified and buffers the
// answer it encrypts; hdc_forward spools a body of no declared length.
package spool

import (
	"errors"
	"io"
	"os"
)

// Spool holds a request's bytes between reading and use (hdc_jwe's
// decoded ciphertext, whose tag must be verified over all of it before any
// plaintext leaves the edge). It keeps the bytes in memory up to a threshold and moves
// them to a temporary file beyond it, so a large upload costs one copy on
// disk, not several in memory. The file is unlinked as soon as it is
// created, so nothing is left behind even if the process dies.
type Spool struct {
	threshold int64
	dir       string
	mem       []byte
	file      *os.File
	size      int64
	large     bool // the expected size is past the threshold: go to disk at once
}

// DefaultThreshold is the size past which a spool moves to a file unless
// told otherwise: 2 MiB, the largest buffer class.
const DefaultThreshold = maxPooledBuffer

// New returns a spool that moves to a file in dir past threshold
// bytes; sizeHint, when positive, is the expected size, so that memory is
// reserved once, or not at all when the bytes will end on disk anyway.
func New(threshold int64, dir string, sizeHint int64) *Spool {
	s := &Spool{threshold: threshold, dir: dir, large: sizeHint > threshold}
	if sizeHint > 0 && !s.large {
		s.mem = TakeBuffer(int(sizeHint) + 16) // room for a GCM tag after it
	}
	return s
}

// Error marks a failure of the spool itself (the edge's disk), as opposed
// to one of the request.
type Error struct{ err error }

func (e *Error) Error() string { return "spool: " + e.err.Error() }

// Unwrap returns the file's error.
func (e *Error) Unwrap() error { return e.err }

// Write implements io.Writer.
func (s *Spool) Write(p []byte) (int, error) {
	if s.file == nil && (s.large || s.size+int64(len(p)) > s.threshold) {
		if err := s.spill(); err != nil {
			return 0, &Error{err}
		}
	}
	if s.file != nil {
		n, err := s.file.Write(p)
		s.size += int64(n)
		if err != nil {
			return n, &Error{err}
		}
		return n, nil
	}
	s.mem = append(s.mem, p...)
	s.size += int64(len(p))
	return len(p), nil
}

// spill moves what is in memory to a new unlinked temporary file.
func (s *Spool) spill() error {
	f, err := os.CreateTemp(s.dir, "hdc-spool-*")
	if err != nil {
		return err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(s.mem); err != nil {
		f.Close()
		return err
	}
	GiveBuffer(s.mem)
	s.file, s.mem = f, nil
	return nil
}

// ReadAt implements io.ReaderAt.
func (s *Spool) ReadAt(p []byte, off int64) (int, error) {
	if s.file != nil {
		return s.file.ReadAt(p, off)
	}
	if off >= int64(len(s.mem)) {
		return 0, io.EOF
	}
	n := copy(p, s.mem[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// InMemory returns the spooled bytes when they are in memory, for the
// caller to use in place.
func (s *Spool) InMemory() ([]byte, bool) { return s.mem, s.file == nil }

// TakeMemory hands the spool's memory over to the caller, which gives it
// back (GiveBuffer) once nothing reads it.
func (s *Spool) TakeMemory() []byte {
	m := s.mem
	s.mem = nil
	return m
}

// Size is the number of bytes written.
func (s *Spool) Size() int64 { return s.size }

// Close releases the file, or gives back the memory that nothing took.
func (s *Spool) Close() error {
	if s.file == nil {
		if s.mem != nil {
			GiveBuffer(s.mem)
			s.mem = nil
		}
		return nil
	}
	err := s.file.Close()
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}
