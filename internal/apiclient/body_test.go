package apiclient

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/testkit"
)

const testKey, testKid = "unit-test-key-16", "k1"

// wire returns what a payload sends, checking that its length is the one
// announced.
func wire(t *testing.T, p payload) []byte {
	t.Helper()
	var out bytes.Buffer
	if p.data != nil {
		out.Write(p.data)
	} else if err := p.write(&out); err != nil {
		t.Fatal(err)
	}
	if p.size >= 0 && int64(out.Len()) != p.size {
		t.Fatalf("%d bytes sent, Content-Length %d", out.Len(), p.size)
	}
	return out.Bytes()
}

// oneShotUpload is the plaintext of an encrypted upload as hdc call made
// it before uploads were streamed: the file read, then base64 in JSON.
func oneShotUpload(file []byte) []byte {
	return []byte(`{"file":"` + base64.StdEncoding.EncodeToString(file) + `"}`)
}

// TestStreamedUploadDecrypts: an encrypted upload streamed from a file is
// as long as announced and decrypts, with go-jose and with package jwe, to
// the plaintext the one-shot encoding made.
func TestStreamedUploadDecrypts(t *testing.T) {
	c, err := New(Credentials{BaseURL: "http://x", ClientID: "c", ClientSecret: "s", Kid: testKid,
		EncryptionKey: testKey}, "", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 2, 3, 4, 15, 16, 17, 100, 32<<10 + 1, 1<<20 + 7} {
		t.Run(fmt.Sprint(n, " bytes"), func(t *testing.T) {
			file := testkit.RandomBytes(n)
			src, err := FileSource(testkit.WriteFile(t, "f.bin", file))
			if err != nil {
				t.Fatal(err)
			}
			p := c.encode(UploadBody(src))
			if p.size < 0 || p.contentType != "application/json" {
				t.Fatalf("size %d, type %q: want a known length of JSON", p.size, p.contentType)
			}
			env := wire(t, p)
			obj, err := jose.ParseEncryptedJSON(string(env), []jose.KeyAlgorithm{jose.DIRECT},
				[]jose.ContentEncryption{jose.A128CBC_HS256})
			if err != nil {
				t.Fatal(err)
			}
			plain, err := obj.Decrypt([]byte(testKey + testKey))
			if err != nil || !bytes.Equal(plain, oneShotUpload(file)) {
				t.Fatalf("go-jose: %v, or the plaintext differs from the one-shot encoding", err)
			}
			e, ct, err := jwe.Parse(env, jwe.Request)
			if err != nil || e.Kid != testKid {
				t.Fatalf("jwe.Parse: %v, kid %q", err, e.Kid)
			}
			if own, err := e.Decrypt(c.key, ct); err != nil || !bytes.Equal(own, plain) {
				t.Fatalf("jwe: %v", err)
			}
		})
	}
}

// TestStreamedMultipart: a plain upload is the multipart form the API
// reads, with the file's name and bytes, as long as announced.
func TestStreamedMultipart(t *testing.T) {
	for _, n := range []int{0, 1, 70 << 10} {
		t.Run(fmt.Sprint(n, " bytes"), func(t *testing.T) {
			file := testkit.RandomBytes(n)
			src, err := FileSource(testkit.WriteFile(t, "visit.mp3", file))
			if err != nil {
				t.Fatal(err)
			}
			p := plainPayload(UploadBody(src))
			_, params, err := mime.ParseMediaType(p.contentType)
			if err != nil {
				t.Fatal(err)
			}
			form, err := multipart.NewReader(bytes.NewReader(wire(t, p)), params["boundary"]).ReadForm(1 << 30)
			if err != nil {
				t.Fatal(err)
			}
			fh := form.File["file"]
			if len(fh) != 1 || fh[0].Filename != "visit.mp3" {
				t.Fatalf("form files %v", form.File)
			}
			f, _ := fh[0].Open()
			got, _ := io.ReadAll(f)
			if !bytes.Equal(got, file) {
				t.Fatal("the file in the form differs")
			}
		})
	}
}

// TestSources: files have a known length and are read again for each
// request; standard input is read once, with a known length only when it
// is a regular file; a file that grows while sent is refused.
func TestSources(t *testing.T) {
	path := testkit.WriteFile(t, "body.json", []byte(`{"a":1}`))
	src, err := FileSource(path)
	if err != nil || src.size != 7 || src.once {
		t.Fatalf("file: %+v, %v", src, err)
	}
	for range 2 {
		var out bytes.Buffer
		if err := src.copyTo(&out); err != nil || out.String() != `{"a":1}` {
			t.Fatalf("copy: %q, %v", out.String(), err)
		}
	}
	if _, err := FileSource(t.TempDir()); err == nil {
		t.Fatal("a directory accepted")
	}

	in := StdinSource(strings.NewReader(`{"b":2}`))
	if in.size != -1 || !in.once {
		t.Fatalf("a pipe: %+v", in)
	}
	var out bytes.Buffer
	if err := in.copyTo(&out); err != nil || out.String() != `{"b":2}` {
		t.Fatalf("stdin: %q, %v", out.String(), err)
	}
	if err := in.copyTo(&out); err == nil {
		t.Fatal("standard input sent twice")
	}
	f, _ := os.Open(path)
	defer f.Close()
	if in := StdinSource(f); in.size != 7 {
		t.Fatalf("stdin from a file: size %d", in.size)
	}

	src.size = 3 // as if the file grew after it was opened
	if err := src.copyTo(io.Discard); err == nil || !strings.Contains(err.Error(), "changed size") {
		t.Fatalf("a file that changed size: %v", err)
	}
}
