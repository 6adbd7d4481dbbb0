package jwe_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/health-data-connect/hdc/internal/jwe"
)

// A client seals a request under its shared key; the edge reads the
// envelope, checks what needs no key, and opens it with the key of its kid.
func Example() {
	key, err := jwe.NewKey("0123456789abcdef") // the client's 16-character shared key
	if err != nil {
		log.Fatal(err)
	}
	envelope := jwe.EncryptRequest(key, jwe.Protected{Kid: "k_example"}, []byte(`{"client_id":"c1"}`))

	e, ct, err := jwe.Parse(envelope, jwe.Request)
	if err != nil {
		log.Fatal(err) // a *jwe.FormatError: safe to show
	}
	plaintext, err := e.Decrypt(key, ct) // jwe.ErrDecrypt for any failure that involves the key
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Kid, string(plaintext))
	// Output: k_example {"client_id":"c1"}
}

// Read takes an envelope as a stream, as the edge does with an upload,
// writing the decoded ciphertext where the caller keeps it (a spool file,
// for a large one) and refusing more than limit bytes; Open then checks the
// tag over that ciphertext before it yields a byte of plaintext.
func ExampleRead() {
	key, _ := jwe.NewKey("0123456789abcdef")
	envelope := jwe.EncryptCompact(key, jwe.Protected{Kid: "k_example"}, []byte("a consultation, uploaded"))

	var spool bytes.Buffer
	e, err := jwe.Read(bytes.NewReader(envelope), jwe.Compact, &spool, 64<<10)
	if err != nil {
		log.Fatal(err)
	}
	pt, _, err := e.Open(key, bytes.NewReader(spool.Bytes()))
	if err != nil {
		log.Fatal(err)
	}
	plaintext, _ := io.ReadAll(pt)
	fmt.Println(string(plaintext))
	// Output: a consultation, uploaded
}

// A RequestWriter seals a body written in pieces, as hdc call streams an
// upload: the envelope goes out as it is sealed, and RequestSize tells its
// length beforehand.
func ExampleNewRequestWriter() {
	key, _ := jwe.NewKey("0123456789abcdef")
	body := strings.Repeat("a large file, ", 1000)

	var out bytes.Buffer
	w, err := jwe.NewRequestWriter(&out, key, jwe.Protected{Kid: "k_example"}, jwe.Request)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := io.Copy(w, strings.NewReader(body)); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(int64(out.Len()) == jwe.RequestSize(jwe.Protected{Kid: "k_example"}, jwe.Request, int64(len(body))))

	e, ct, _ := jwe.Parse(out.Bytes(), jwe.Request)
	plaintext, _ := e.Decrypt(key, ct)
	fmt.Println(string(plaintext) == body)
	// Output:
	// true
	// true
}
