package apiclient

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"os"
	"path/filepath"
)

// Body is a request body: JSON held in memory, or content read as it is
// sent (--data @file, --data -, --file), so that a large one never is.
type Body struct {
	json []byte  // a JSON body in memory, or
	src  *Source // one read as it is sent
	// upload: src is a file to upload, sent as multipart/form-data, or
	// encrypted as the JSON form {"file":"<base64>"}.
	upload bool
}

// JSONBody is a JSON body held in memory.
func JSONBody(b []byte) *Body { return &Body{json: b} }

// StreamBody is a JSON body read from src as it is sent, as it is: the API
// checks it.
func StreamBody(src *Source) *Body { return &Body{src: src} }

// UploadBody is the file src to upload: sent as multipart/form-data, or
// encrypted as the JSON form {"file":"<base64>"}.
func UploadBody(src *Source) *Body { return &Body{src: src, upload: true} }

// replayable reports whether the body can be sent a second time.
func (b *Body) replayable() bool { return b == nil || b.src == nil || !b.src.once }

// Source is content read as it is sent: a file, opened again for each
// request, or standard input, which can be read once.
type Source struct {
	name string // the file's base name, for a multipart upload
	size int64  // in bytes, or -1 when unknown (the body is sent chunked)
	once bool
	open func() (io.ReadCloser, error)
}

// FileSource is the file at path; its size is known when it is a regular
// file, and a pipe or device given by name is read once, like stdin.
func FileSource(path string) (*Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory", path)
	}
	s := &Source{name: filepath.Base(path), size: st.Size()}
	if !st.Mode().IsRegular() {
		s.size = -1 // a pipe or a device: its size says nothing
		return readOnce(s, f), nil
	}
	f.Close()
	s.open = func() (io.ReadCloser, error) { return os.Open(path) }
	return s, nil
}

// StdinSource is standard input. Its size is known when it is a regular
// file (hdc call … --data - < body.json).
func StdinSource(stdin io.Reader) *Source {
	s := &Source{name: "stdin", size: -1}
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if pos, err := f.Seek(0, io.SeekCurrent); err == nil {
				s.size = st.Size() - pos
			}
		}
	}
	return readOnce(s, io.NopCloser(stdin))
}

// readOnce makes s read r, and only once.
func readOnce(s *Source, r io.ReadCloser) *Source {
	s.once = true
	s.open = func() (io.ReadCloser, error) {
		if r == nil {
			return nil, errors.New("standard input was already sent")
		}
		rc := r
		r = nil
		return rc, nil
	}
	return s
}

// copyTo writes the content to w: exactly size bytes when the size is
// known, so that the Content-Length sent holds.
func (s *Source) copyTo(w io.Writer) error {
	r, err := s.open()
	if err != nil {
		return err
	}
	defer r.Close()
	if s.size < 0 {
		_, err = io.Copy(w, r)
		return err
	}
	n, err := io.Copy(w, io.LimitReader(r, s.size))
	if err != nil {
		return err
	}
	var more [1]byte
	if m, _ := r.Read(more[:]); n < s.size || m > 0 {
		return fmt.Errorf("%s changed size while it was being sent", s.name)
	}
	return nil
}

// payload is a request body as it goes on the wire.
type payload struct {
	contentType string
	size        int64                 // in bytes, or -1: sent chunked
	data        []byte                // held in memory, or
	write       func(io.Writer) error // written as it is sent
}

func (p payload) empty() bool { return p.data == nil && p.write == nil }

// plainPayload is b as sent without encryption: an upload as
// multipart/form-data, anything else as it is.
func plainPayload(b *Body) payload {
	switch {
	case b == nil:
		return payload{}
	case b.src == nil:
		return payload{contentType: "application/json", size: int64(len(b.json)), data: b.json}
	case b.upload:
		return multipartPayload(b.src)
	}
	return payload{contentType: "application/json", size: b.src.size, write: b.src.copyTo}
}

// multipartPayload streams the file as the form part "file"; its length is
// the file's plus the multipart framing, built ahead.
func multipartPayload(src *Source) payload {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_, _ = mw.CreateFormFile("file", src.name)
	head := bytes.Clone(buf.Bytes())
	buf.Reset()
	_ = mw.Close()
	tail := buf.Bytes()
	return payload{
		contentType: mw.FormDataContentType(),
		size:        sizeAround(src.size, len(head)+len(tail)),
		write:       framed(head, src.copyTo, tail),
	}
}

// uploadHead and uploadTail frame the file in the JSON form of an upload.
const uploadHead, uploadTail = `{"file":"`, `"}`

// jsonUploadPayload streams the file as the JSON form {"file":"<base64>"},
// the plaintext of an encrypted upload.
func jsonUploadPayload(src *Source) payload {
	encoded := int64(-1)
	if src.size >= 0 {
		encoded = (src.size + 2) / 3 * 4
	}
	return payload{
		contentType: "application/json",
		size:        sizeAround(encoded, len(uploadHead)+len(uploadTail)),
		write: framed([]byte(uploadHead), func(w io.Writer) error {
			enc := base64.NewEncoder(base64.StdEncoding, w)
			if err := src.copyTo(enc); err != nil {
				return err
			}
			return enc.Close()
		}, []byte(uploadTail)),
	}
}

// sizeAround is n plus frame, or -1 when n is unknown.
func sizeAround(n int64, frame int) int64 {
	if n < 0 {
		return -1
	}
	return n + int64(frame)
}

// framed writes head, then what content writes, then tail.
func framed(head []byte, content func(io.Writer) error, tail []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		if _, err := w.Write(head); err != nil {
			return err
		}
		if err := content(w); err != nil {
			return err
		}
		_, err := w.Write(tail)
		return err
	}
}
