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

// testKey is a key of each content encryption, with its raw content
// encryption key as go-jose takes it.
type testKey struct {
	key *CEK
	cek []byte
	enc jose.ContentEncryption
}

func testKeys(t testing.TB) []testKey {
	cbc, err := NewKey(testShared)
	if err != nil {
		t.Fatal(err)
	}
	raw := testkit.RandomBytes(GCMKeySize)
	gcm, err := NewKeyFor(EncA256GCM, b64.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	return []testKey{{cbc, []byte(testShared + testShared), jose.A128CBC_HS256}, {gcm, raw, jose.A256GCM}}
}

// TestGoJoseDecryptsOurs encrypts random payloads with this codec, in every
// shape it produces, under a key of each enc, and decrypts them with
// go-jose and with this codec; requests name iat and jti.
func TestGoJoseDecryptsOurs(t *testing.T) {
	t.Parallel()
	for _, tk := range testKeys(t) {
		t.Run(string(tk.enc), func(t *testing.T) { goJoseDecryptsOurs(t, tk) })
	}
}

func goJoseDecryptsOurs(t *testing.T, tk testKey) {
	key, cek := tk.key, tk.cek
	algs, encs := []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{tk.enc}
	fresh := Protected{Kid: "k1", Iat: 1795000000, Jti: "a-request-id-0001"}
	for _, n := range testkit.PayloadSizes(t) {
		pt := testkit.RandomBytes(n)
		shapes := []struct {
			name  string
			data  []byte
			form  Form
			parse func(string, []jose.KeyAlgorithm, []jose.ContentEncryption) (*jose.JSONWebEncryption, error)
		}{
			{"request", EncryptRequest(key, fresh, pt), Request, jose.ParseEncryptedJSON},
			{"compact", EncryptCompact(key, fresh, pt), Compact, jose.ParseEncryptedCompact},
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
			if sh.name != "response" && (e.Header.Iat != fresh.Iat || e.Header.Jti != fresh.Jti ||
				obj.Header.ExtraHeaders["jti"] != fresh.Jti || obj.Header.ExtraHeaders["iat"] != float64(fresh.Iat)) {
				t.Fatalf("%s: iat and jti read as %d %q, by go-jose as %v", sh.name, e.Header.Iat, e.Header.Jti, obj.Header.ExtraHeaders)
			}
		}
	}
}

// TestWeDecryptGoJose encrypts random payloads with go-jose under a key of
// each enc, iat and jti in the protected header, and decrypts them with
// this codec, flattened and compact, streaming the plaintext through
// readers of awkward sizes.
func TestWeDecryptGoJose(t *testing.T) {
	t.Parallel()
	for _, tk := range testKeys(t) {
		t.Run(string(tk.enc), func(t *testing.T) { weDecryptGoJose(t, tk) })
	}
}

func weDecryptGoJose(t *testing.T, tk testKey) {
	key := tk.key
	opts := (&jose.EncrypterOptions{}).WithHeader("iat", 1795000000).WithHeader("jti", "a-request-id-0001")
	enc, err := jose.NewEncrypter(tk.enc, jose.Recipient{Algorithm: jose.DIRECT, Key: tk.cek, KeyID: "k1"}, opts)
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
			if e.Kid != "k1" || e.Header.Iat != 1795000000 || e.Header.Jti != "a-request-id-0001" {
				t.Fatalf("kid, iat, jti = %q, %d, %q", e.Kid, e.Header.Iat, e.Header.Jti)
			}
			p, size, err := e.Open(key, bytes.NewReader(ct.Bytes()))
			if err != nil {
				t.Fatalf("%d bytes: %v", n, err)
			}
			if size != int64(n) {
				t.Fatalf("size = %d, want %d", size, n)
			}
			got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(p, 1<<30)))
			if n > 4096 { // byte-at-a-time is slow; larger reads for big payloads
				p, _, _ = e.Open(key, bytes.NewReader(ct.Bytes()))
				got, err = io.ReadAll(p)
			}
			if err != nil || !bytes.Equal(got, pt) {
				t.Fatalf("%d bytes: plaintext differs (%v)", n, err)
			}
		}
	}
}
