package jwe

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/health-data-connect/hdc/internal/testkit"
)

const testShared = "0123456789abcdef"

// TestGoJoseDecryptsOurs encrypts random payloads with this codec, in every
// shape it produces, and decrypts them with go-jose and with this codec.
func TestGoJoseDecryptsOurs(t *testing.T) {
	key, _ := NewKey(testShared)
	cek := []byte(testShared + testShared)
	algs, encs := []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A128CBC_HS256}
	for _, n := range testkit.PayloadSizes(t) {
		pt := testkit.RandomBytes(n)
		shapes := []struct {
			name  string
			data  []byte
			form  Form
			parse func(string, []jose.KeyAlgorithm, []jose.ContentEncryption) (*jose.JSONWebEncryption, error)
		}{
			{"request", EncryptRequest(key, "k1", pt), Request, jose.ParseEncryptedJSON},
			{"compact", EncryptCompact(key, "k1", pt), Compact, jose.ParseEncryptedCompact},
			{"response", EncryptResponse(key, "k1", pt), Flattened, jose.ParseEncryptedJSON},
		}
		for _, sh := range shapes {
			e, ct, err := Parse(sh.data, sh.form)
			if err != nil {
				t.Fatalf("%s, %d bytes: %v", sh.name, n, err)
			}
			if own, err := e.Decrypt(key, ct); err != nil || !bytes.Equal(own, pt) || e.Kid != "k1" {
				t.Fatalf("%s, %d bytes: our round trip failed (%v)", sh.name, n, err)
			}
			obj, err := sh.parse(string(sh.data), algs, encs)
			if err != nil {
				t.Fatalf("%s, %d bytes: go-jose parse: %v", sh.name, n, err)
			}
			got, err := obj.Decrypt(cek)
			if err != nil {
				t.Fatalf("%s, %d bytes: go-jose decrypt: %v", sh.name, n, err)
			}
			if !bytes.Equal(got, pt) {
				t.Fatalf("%s, %d bytes: plaintext differs", sh.name, n)
			}
			if obj.Header.KeyID != "k1" {
				t.Fatalf("%s: go-jose sees kid %q", sh.name, obj.Header.KeyID)
			}
		}
	}
}

// TestWeDecryptGoJose encrypts random payloads with go-jose and decrypts them
// with this codec, flattened and compact, streaming the plaintext through
// readers of awkward sizes.
func TestWeDecryptGoJose(t *testing.T) {
	key, _ := NewKey(testShared)
	enc, err := jose.NewEncrypter(jose.A128CBC_HS256,
		jose.Recipient{Algorithm: jose.DIRECT, Key: []byte(testShared + testShared), KeyID: "k1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range testkit.PayloadSizes(t) {
		pt := testkit.RandomBytes(n)
		obj, err := enc.Encrypt(pt)
		if err != nil {
			t.Fatal(err)
		}
		compact, err := obj.CompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []struct {
			form Form
			data string
		}{{Request, obj.FullSerialize()}, {Compact, compact}} {
			var ct bytes.Buffer
			e, err := Read(iotest.HalfReader(bytes.NewReader([]byte(in.data))), in.form, &ct, int64(len(in.data)))
			if err != nil {
				t.Fatalf("%d bytes, form %d: %v", n, in.form, err)
			}
			if e.Kid != "k1" {
				t.Fatalf("kid = %q", e.Kid)
			}
			p, err := e.Open(key, bytes.NewReader(ct.Bytes()))
			if err != nil {
				t.Fatalf("%d bytes: %v", n, err)
			}
			if p.Size != int64(n) {
				t.Fatalf("Size = %d, want %d", p.Size, n)
			}
			got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(p, 1<<30)))
			if n > 4096 { // byte-at-a-time is slow; larger reads for big payloads
				p, _ = e.Open(key, bytes.NewReader(ct.Bytes()))
				got, err = io.ReadAll(p)
			}
			if err != nil || !bytes.Equal(got, pt) {
				t.Fatalf("%d bytes: plaintext differs (%v)", n, err)
			}
		}
	}
}
