package upload

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"unicode"
)

// maxOtherPart bounds each form part other than "file"; they are read and
// dropped.
const maxOtherPart = 64 << 10

// Part is the "file" part of a multipart upload.
type Part struct {
	io.Reader
	// Name is the part's file name, cleaned for display, or empty.
	Name string
	// ContentType is the part's declared media type, or empty.
	ContentType string
}

// MultipartFile finds the part named "file" in mr and returns it as a
// stream. Parts before it are skipped. Like JSONFile, the returned reader
// reports io.EOF only after checking the rest of the form: a second "file"
// part, or a malformed form, is an *Error.
func MultipartFile(mr *multipart.Reader) (*Part, error) {
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, errorf("the form has no part named \"file\"")
		}
		if err != nil {
			return nil, formError(err)
		}
		if p.FormName() != "file" {
			if err := skip(p); err != nil {
				return nil, err
			}
			continue
		}
		ct := ""
		if mt, _, err := mime.ParseMediaType(p.Header.Get("Content-Type")); err == nil {
			ct = mt
		}
		return &Part{
			Reader:      &formRest{part: p, mr: mr},
			Name:        cleanName(p.FileName()),
			ContentType: ct,
		}, nil
	}
}

// formRest reads the file part, then checks the parts after it.
type formRest struct {
	part *multipart.Part
	mr   *multipart.Reader
	err  error
}

func (f *formRest) Read(b []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.part.Read(b)
	if err == io.EOF {
		err = f.rest()
	} else if err != nil {
		err = formError(err)
	}
	f.err = err
	return n, err
}

func (f *formRest) rest() error {
	for {
		p, err := f.mr.NextPart()
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return formError(err)
		}
		if p.FormName() == "file" {
			return errorf("the form has more than one part named \"file\"")
		}
		if err := skip(p); err != nil {
			return err
		}
	}
}

// skip drops a part that is not the file, refusing a large one.
func skip(p *multipart.Part) error {
	n, err := io.Copy(io.Discard, io.LimitReader(p, maxOtherPart+1))
	if err != nil {
		return formError(err)
	}
	if n > maxOtherPart {
		return errorf("form parts other than \"file\" are limited to %d bytes", maxOtherPart)
	}
	return nil
}

// formError makes a failure to read the form an *Error, except a body over
// its limit, which the caller answers differently.
func formError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return err
	}
	return errorf("malformed multipart form")
}

// cleanName keeps a file name fit for display: printable characters only,
// at most 200 of them.
func cleanName(name string) string {
	name = strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return -1
		}
		return r
	}, name)
	if r := []rune(name); len(r) > 200 {
		name = string(r[:200])
	}
	return strings.TrimSpace(name)
}
