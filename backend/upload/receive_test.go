package upload

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"io"
	"io/fs"
	"mime/multipart"
	"net/textproto"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/health-data-connect/hdc/backend/blob"
)

func newBlobs(t *testing.T) *blob.Dir {
	t.Helper()
	d, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestReceive(t *testing.T) {
	wav := append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 100)...)
	tests := []struct {
		name     string
		content  []byte
		declared string
		limit    int64
		wantType string
		wantErr  error
	}{
		{"wave sniffed", wav, "application/pdf", 1 << 20, "audio/wave", nil},
		{"declared when unknown", []byte{0, 1, 2, 3, 0xfe}, "audio/x-custom", 1 << 20, "audio/x-custom", nil},
		{"octet-stream", []byte{0, 1, 2, 3, 0xfe}, "", 1 << 20, "application/octet-stream", nil},
		{"text", []byte("hello"), "", 1 << 20, "text/plain; charset=utf-8", nil},
		{"exactly the limit", []byte("12345"), "", 5, "text/plain; charset=utf-8", nil},
		{"over the limit", []byte("123456"), "", 5, "", ErrTooLarge},
		{"empty", nil, "", 5, "", ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blobs := newBlobs(t)
			f, err := Receive(t.Context(), blobs, bytes.NewReader(tt.content), tt.limit, tt.declared)
			if tt.wantErr != nil {
				var se *SourceError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &se) {
					t.Fatalf("error = %v, want a SourceError of %v", err, tt.wantErr)
				}
				return
			}
			sum := sha1.Sum(tt.content)
			if err != nil || f.Size != int64(len(tt.content)) || !bytes.Equal(f.SHA1, sum[:]) || f.ContentType != tt.wantType {
				t.Fatalf("Receive = %+v, %v", f, err)
			}
			rc, err := blobs.Open(t.Context(), f.Key)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			if got, _ := io.ReadAll(rc); !bytes.Equal(got, tt.content) {
				t.Fatal("stored content differs")
			}
		})
	}
}

func TestReceiveSourceErrorStoresNothing(t *testing.T) {
	root := t.TempDir()
	blobs, err := blob.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Receive(t.Context(), blobs, JSONFile(strings.NewReader(`{"file":"QUJD"}garbage`)), 1<<20, "")
	var e *Error
	var se *SourceError
	if !errors.As(err, &e) || !errors.As(err, &se) {
		t.Fatalf("error = %v, want a SourceError wrapping an *Error", err)
	}
	var files []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if len(files) != 0 {
		t.Fatalf("a failed upload left files: %q", files)
	}
}

type formPart struct {
	name, filename, ct, body string
}

func form(t *testing.T, parts ...formPart) *multipart.Reader {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := `form-data; name="` + p.name + `"`
		if p.filename != "" {
			cd += `; filename="` + p.filename + `"`
		}
		h.Set("Content-Disposition", cd)
		if p.ct != "" {
			h.Set("Content-Type", p.ct)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(pw, p.body)
	}
	w.Close()
	return multipart.NewReader(&buf, w.Boundary())
}

func TestMultipartFile(t *testing.T) {
	tests := []struct {
		name           string
		parts          []formPart
		want, wantName string
		wantType       string
		wantErr        string
	}{
		{"file only", []formPart{{"file", "visit.wav", "audio/wav", "abc"}}, "abc", "visit.wav", "audio/wav", ""},
		{"other parts around", []formPart{{"note", "", "", "x"}, {"file", "a.mp3", "", "abc"}, {"other", "", "", "y"}}, "abc", "a.mp3", "", ""},
		{"path in name", []formPart{{"file", "../../etc/passwd", "", "abc"}}, "abc", "passwd", "", ""},
		{"control characters in name", []formPart{{"file", "a\tb.wav", "", "abc"}}, "abc", "ab.wav", "", ""},
		{"no file part", []formPart{{"note", "", "", "x"}}, "", "", "", `no part named "file"`},
		{"two file parts", []formPart{{"file", "a", "", "abc"}, {"file", "b", "", "def"}}, "abc", "", "", "more than one"},
		{"large other part", []formPart{{"file", "a", "", "abc"}, {"junk", "", "", strings.Repeat("j", maxOtherPart+1)}}, "abc", "", "", "limited to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := MultipartFile(form(t, tt.parts...))
			var got []byte
			if err == nil {
				got, err = io.ReadAll(p)
			}
			if tt.wantErr != "" {
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want || p.Name != tt.wantName || p.ContentType != tt.wantType {
				t.Fatalf("got %q name %q type %q, %v", got, p.Name, p.ContentType, err)
			}
		})
	}
}

func TestMultipartMalformed(t *testing.T) {
	mr := multipart.NewReader(strings.NewReader("--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc"), "b")
	p, err := MultipartFile(mr)
	if err == nil {
		_, err = io.ReadAll(p)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("truncated form: %v", err)
	}
}

// FuzzMultipartFile feeds MultipartFile arbitrary form bodies: it never
// panics, refuses with an *Error, and accepts exactly the forms a plain
// reading with mime/multipart finds well formed with one "file" part (and
// small other parts), giving that part's bytes and a clean name.
func FuzzMultipartFile(f *testing.F) {
	const boundary = "xYzZy"
	for _, parts := range [][]formPart{
		{{"file", "visit.wav", "audio/wav", "abc"}},
		{{"note", "", "", "x"}, {"file", "a.mp3", "", "abc"}, {"other", "", "", "y"}},
		{{"file", "a", "", "abc"}, {"file", "b", "", "def"}},
		{{"note", "", "", "x"}},
		{{"file", "../x\t\u202e.wav", "text/plain; charset=utf-8", ""}},
	} {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		if err := w.SetBoundary(boundary); err != nil {
			f.Fatal(err)
		}
		for _, p := range parts {
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"; filename="`+p.filename+`"`)
			if p.ct != "" {
				h.Set("Content-Type", p.ct)
			}
			pw, _ := w.CreatePart(h)
			io.WriteString(pw, p.body)
		}
		w.Close()
		f.Add(buf.Bytes())
	}
	f.Add([]byte("--xYzZy\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc"))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := MultipartFile(multipart.NewReader(bytes.NewReader(body), boundary))
		var got []byte
		if err == nil {
			got, err = io.ReadAll(p)
		}
		want, ok := readForm(body, boundary)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			if ok {
				t.Fatalf("refused a well-formed form with one file part: %v", err)
			}
			return
		}
		if !ok {
			t.Fatal("accepted a form that is malformed or has no single file part")
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("file bytes %q, want %q", got, want)
		}
		if !utf8.ValidString(p.Name) || utf8.RuneCountInString(p.Name) > 200 || strings.TrimSpace(p.Name) != p.Name ||
			strings.ContainsFunc(p.Name, func(r rune) bool { return !unicode.IsPrint(r) }) {
			t.Fatalf("file name %q is not clean", p.Name)
		}
	})
}

// readForm reads a whole form with mime/multipart alone and returns the
// content of its "file" part, with ok when the form is well formed, has
// exactly one such part, and no other part over maxOtherPart.
func readForm(body []byte, boundary string) (file []byte, ok bool) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	files := 0
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return file, files == 1
		}
		if err != nil {
			return nil, false
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, false
		}
		if p.FormName() == "file" {
			files++
			file = data
		} else if len(data) > maxOtherPart {
			return nil, false
		}
	}
}
