package upload

import (
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/health-data-connect/hdc/backend/blob"
)

// ErrTooLarge is returned when a file exceeds the upload limit.
var ErrTooLarge = errors.New("upload: file too large")

// ErrEmpty is returned for a file of no bytes.
var ErrEmpty = &Error{msg: "the file is empty"}

// File is a received file.
type File struct {
	// Key is its content address in the blob store.
	Key  string
	Size int64
	// SHA1 is the digest FHIR's Attachment.hash carries.
	SHA1 []byte
	// ContentType is sniffed from the content, or the declared type when
	// sniffing finds nothing specific.
	ContentType string
}

// Receive streams src, at most limit bytes, into blobs. declared is the
// media type the client gave, or empty. Errors of src (an *Error, ErrTooLarge,
// or a failure to read the request) come back wrapped in a *SourceError so
// the caller can tell them from the store's.
func Receive(ctx context.Context, blobs blob.Store, src io.Reader, limit int64, declared string) (File, error) {
	var first [1]byte
	n, err := io.ReadFull(src, first[:])
	switch {
	case err == io.EOF:
		return File{}, &SourceError{ErrEmpty}
	case err != nil:
		return File{}, &SourceError{err}
	}
	var (
		sha    = sha1.New()
		sniff  sniffer
		source = &sourceReader{r: io.MultiReader(bytes.NewReader(first[:n]), src), left: limit}
	)
	key, size, err := blobs.Put(ctx, io.TeeReader(source, io.MultiWriter(sha, &sniff)))
	if err != nil {
		if source.err != nil {
			return File{}, &SourceError{source.err}
		}
		return File{}, err
	}
	return File{Key: key, Size: size, SHA1: sha.Sum(nil), ContentType: sniff.contentType(declared)}, nil
}

// SourceError is a failure of the client's side of an upload.
type SourceError struct{ Err error }

// Error implements error.
func (e *SourceError) Error() string { return e.Err.Error() }

// Unwrap returns the source's error.
func (e *SourceError) Unwrap() error { return e.Err }

// sourceReader enforces the limit and remembers the source's error.
type sourceReader struct {
	r    io.Reader
	left int64
	err  error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	if int64(len(p)) > s.left+1 {
		p = p[:s.left+1]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	if s.left < 0 {
		n, err = n+int(s.left), ErrTooLarge
	}
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// sniffer keeps the first 512 bytes, all http.DetectContentType looks at.
type sniffer struct {
	buf [512]byte
	n   int
}

func (s *sniffer) Write(p []byte) (int, error) {
	s.n += copy(s.buf[s.n:], p)
	return len(p), nil
}

func (s *sniffer) contentType(declared string) string {
	ct := http.DetectContentType(s.buf[:s.n])
	if ct == "application/octet-stream" && declared != "" {
		if d := mime.FormatMediaType(declared, nil); d != "" {
			return d
		}
	}
	return ct
}
