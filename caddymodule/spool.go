package caddymodule

import (
	"errors"
	"io"
	"os"
)

// spool holds a request's decoded ciphertext between reading and
// decrypting: the tag must be verified over all of it before any plaintext
// leaves the edge. It keeps the bytes in memory up to a threshold and moves
// them to a temporary file beyond it, so a large upload costs one copy on
// disk, not several in memory. The file is unlinked as soon as it is
// created, so nothing is left behind even if the process dies.
type spool struct {
	threshold int64
	dir       string
	mem       []byte
	file      *os.File
	size      int64
	large     bool // the expected size is past the threshold: go to disk at once
}

// newSpool returns a spool that moves to a file in dir past threshold
// bytes; sizeHint, when positive, is the expected size, so that memory is
// reserved once, or not at all when the bytes will end on disk anyway.
func newSpool(threshold int64, dir string, sizeHint int64) *spool {
	s := &spool{threshold: threshold, dir: dir, large: sizeHint > threshold}
	if sizeHint > 0 && !s.large {
		s.mem = takeBuffer(int(sizeHint) + 16) // room for a GCM tag after it
	}
	return s
}

// spoolError marks a failure of the spool itself (the edge's disk), as
// opposed to one of the request.
type spoolError struct{ err error }

func (e *spoolError) Error() string { return "spool: " + e.err.Error() }
func (e *spoolError) Unwrap() error { return e.err }

// Write implements io.Writer.
func (s *spool) Write(p []byte) (int, error) {
	if s.file == nil && (s.large || s.size+int64(len(p)) > s.threshold) {
		if err := s.spill(); err != nil {
			return 0, &spoolError{err}
		}
	}
	if s.file != nil {
		n, err := s.file.Write(p)
		s.size += int64(n)
		if err != nil {
			return n, &spoolError{err}
		}
		return n, nil
	}
	s.mem = append(s.mem, p...)
	s.size += int64(len(p))
	return len(p), nil
}

// spill moves what is in memory to a new unlinked temporary file.
func (s *spool) spill() error {
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
	giveBuffer(s.mem)
	s.file, s.mem = f, nil
	return nil
}

// ReadAt implements io.ReaderAt.
func (s *spool) ReadAt(p []byte, off int64) (int, error) {
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

// inMemory returns the spooled bytes when they are in memory, for the
// caller to use in place.
func (s *spool) inMemory() ([]byte, bool) { return s.mem, s.file == nil }

// takeMemory hands the spool's memory over to the caller, which gives it
// back (giveBuffer) once nothing reads it.
func (s *spool) takeMemory() []byte {
	m := s.mem
	s.mem = nil
	return m
}

// Close releases the file, or gives back the memory that nothing took.
func (s *spool) Close() error {
	if s.file == nil {
		if s.mem != nil {
			giveBuffer(s.mem)
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
