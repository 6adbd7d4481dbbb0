package cbchmac

import (
	"bytes"
	"io"
	"testing"
)

// FuzzOpen opens arbitrary ciphertexts under a fixed key: it must never
// panic, fail only with ErrDecrypt, and never return more than it was
// given. It also seals each input as a plaintext and opens it back, in
// memory and as a stream.
func FuzzOpen(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v.aad, v.iv, v.tag, v.ct)
	}
	f.Add([]byte(""), make([]byte, IVSize), make([]byte, TagSize), make([]byte, BlockSize))
	key, _ := NewKey(bytes.Repeat([]byte{7}, KeySize))
	f.Fuzz(func(t *testing.T, aad, iv, tag, ct []byte) {
		s := Sealed{AAD: string(aad), Size: int64(len(ct))}
		copy(s.IV[:], iv)
		copy(s.Tag[:], tag)
		pt, err := key.Decrypt(&s, ct)
		if err != nil && err != ErrDecrypt {
			t.Fatalf("Decrypt: %v", err)
		}
		if err == nil && len(pt) >= len(ct) {
			t.Fatal("plaintext not shorter than the ciphertext")
		}

		iv2, ct2, tag2 := key.Seal(string(aad), ct)
		s2 := Sealed{AAD: string(aad), Size: int64(len(ct2))}
		copy(s2.IV[:], iv2)
		copy(s2.Tag[:], tag2)
		if got, err := key.Decrypt(&s2, ct2); err != nil || !bytes.Equal(got, ct) {
			t.Fatalf("round trip in memory: %v", err)
		}
		p, err := key.Open(&s2, bytes.NewReader(ct2))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(p); err != nil || !bytes.Equal(got, ct) {
			t.Fatalf("round trip as a stream: %v", err)
		}
	})
}
