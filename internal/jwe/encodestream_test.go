package jwe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// streamRequest writes pt through a RequestWriter in pieces of piece bytes.
func streamRequest(t *testing.T, kid string, form Form, pt []byte, piece int) []byte {
	t.Helper()
	key, _ := NewKey(testShared)
	var out bytes.Buffer
	w, err := NewRequestWriter(&out, key, Protected{Kid: kid}, form)
	if err != nil {
		t.Fatal(err)
	}
	for rest := pt; len(rest) > 0; {
		n := min(piece, len(rest))
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// jsonMembers returns the member names of a JSON object, in order.
func jsonMembers(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	var names []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		name, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// streamForm is a form a RequestWriter writes, with its one-shot encoder
// and go-jose's parser.
type streamForm struct {
	name    string
	form    Form
	oneShot func(kid string, pt []byte) []byte
	parse   func(string, []jose.KeyAlgorithm, []jose.ContentEncryption) (*jose.JSONWebEncryption, error)
}

// TestRequestWriter streams envelopes of both forms and checks that each is
// as long as RequestSize says, has the shape of the one-shot envelope
// (members, their order, the protected header), and decrypts to the
// plaintext with this package and with go-jose.
func TestRequestWriter(t *testing.T) {
	key, _ := NewKey(testShared)
	forms := []streamForm{
		{"json", Request, func(kid string, pt []byte) []byte { return EncryptRequest(key, Protected{Kid: kid}, pt) }, jose.ParseEncryptedJSON},
		{"compact", Compact, func(kid string, pt []byte) []byte { return EncryptCompact(key, Protected{Kid: kid}, pt) }, jose.ParseEncryptedCompact},
	}
	sizes := []int{0, 1, 2, 3, 15, 16, 17, 47, 48, 49, streamBuffer + 5, 1<<20 + 3}
	for _, f := range forms {
		for _, kid := range []string{"client-1", "", `quo"te`} {
			for i, n := range sizes {
				t.Run(fmt.Sprintf("%s/kid %q/%d bytes", f.name, kid, n), func(t *testing.T) {
					checkStreamed(t, f, kid, testkit.RandomBytes(n), 1+i*997)
				})
			}
		}
	}
}

// checkStreamed streams pt in pieces of piece bytes and checks the envelope.
func checkStreamed(t *testing.T, f streamForm, kid string, pt []byte, piece int) {
	t.Helper()
	key, _ := NewKey(testShared)
	got := streamRequest(t, kid, f.form, pt, piece)
	if size := RequestSize(Protected{Kid: kid}, f.form, int64(len(pt))); int64(len(got)) != size {
		t.Fatalf("%d bytes written, RequestSize says %d", len(got), size)
	}
	want := f.oneShot(kid, pt)
	if len(got) != len(want) {
		t.Fatalf("%d bytes, the one-shot envelope %d", len(got), len(want))
	}
	if f.form == Compact {
		if g, w := strings.Split(string(got), "."), strings.Split(string(want), "."); len(g) != 5 || g[0] != w[0] || g[1] != "" {
			t.Fatalf("compact envelope %.80s…, want the shape of %.80s…", got, want)
		}
	} else if g, w := jsonMembers(t, got), jsonMembers(t, want); !slices.Equal(g, w) {
		t.Fatalf("members %v, the one-shot envelope's %v", g, w)
	}
	e, ct, err := Parse(got, f.form)
	if err != nil {
		t.Fatal(err)
	}
	if own, err := e.Decrypt(key, ct); err != nil || !bytes.Equal(own, pt) || e.Kid != kid {
		t.Fatalf("our round trip failed (%v), kid %q", err, e.Kid)
	}
	obj, err := f.parse(string(got), []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A128CBC_HS256})
	if err != nil {
		t.Fatalf("go-jose parse: %v", err)
	}
	if plain, err := obj.Decrypt([]byte(testShared + testShared)); err != nil || !bytes.Equal(plain, pt) {
		t.Fatalf("go-jose decrypt: %v", err)
	}
}

// TestRequestWriterForms: only the request forms can be streamed, and a
// closed writer refuses more.
func TestRequestWriterForms(t *testing.T) {
	key, _ := NewKey(testShared)
	if _, err := NewRequestWriter(&bytes.Buffer{}, key, Protected{Kid: "k"}, Flattened); err == nil {
		t.Fatal("form Flattened accepted")
	}
	w, err := NewRequestWriter(&bytes.Buffer{}, key, Protected{Kid: "k"}, Request)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write after Close accepted")
	}
}
