package cbchmac

import (
	"bytes"
	"crypto/aes"
	"io"
	"testing"
	"testing/iotest"

	josecipher "github.com/go-jose/go-jose/v4/cipher"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestSealMatchesGoJose holds the hand-written sealing to go-jose's
// A128CBC-HS256 AEAD: for the same key, iv, additional data and plaintext,
// the same ciphertext and tag, byte for byte.
func TestSealMatchesGoJose(t *testing.T) {
	for _, n := range testkit.PayloadSizes(t) {
		cek, iv, pt := testkit.RandomBytes(KeySize), testkit.RandomBytes(IVSize), testkit.RandomBytes(n)
		aad := string(testkit.RandomBytes(n % 97))
		key, err := NewKey(cek)
		if err != nil {
			t.Fatal(err)
		}
		aead, err := josecipher.NewCBCHMAC(cek, aes.NewCipher)
		if err != nil {
			t.Fatal(err)
		}
		want := aead.Seal(nil, iv, pt, []byte(aad))
		ct, tag := key.sealIV(iv, aad, pt)
		if got := append(bytes.Clone(ct), tag...); !bytes.Equal(got, want) {
			t.Fatalf("%d bytes, %d of aad: sealed output differs from go-jose's", n, len(aad))
		}
	}
}

// TestOpenGoJose opens what go-jose's AEAD seals, in memory and as a stream
// read through readers of awkward sizes.
func TestOpenGoJose(t *testing.T) {
	for _, n := range testkit.PayloadSizes(t) {
		cek, iv, pt := testkit.RandomBytes(KeySize), testkit.RandomBytes(IVSize), testkit.RandomBytes(n)
		aad := string(testkit.RandomBytes(n % 53))
		key, _ := NewKey(cek)
		aead, _ := josecipher.NewCBCHMAC(cek, aes.NewCipher)
		out := aead.Seal(nil, iv, pt, []byte(aad))
		ct := out[:len(out)-TagSize]
		s := Sealed{AAD: aad, Size: int64(len(ct))}
		copy(s.IV[:], iv)
		copy(s.Tag[:], out[len(ct):])
		if got, err := key.Decrypt(&s, ct); err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("%d bytes: Decrypt differs (%v)", n, err)
		}
		p, err := key.Open(&s, bytes.NewReader(ct))
		if err != nil || p.Size != int64(n) {
			t.Fatalf("%d bytes: Open: %v", n, err)
		}
		r := io.Reader(p)
		if n <= 4096 { // byte at a time is slow; larger reads for big payloads
			r = iotest.OneByteReader(p)
		}
		if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("%d bytes: streamed plaintext differs (%v)", n, err)
		}
	}
}
