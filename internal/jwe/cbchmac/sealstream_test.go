package cbchmac

import (
	"bytes"
	"crypto/aes"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"testing"

	josecipher "github.com/go-jose/go-jose/v4/cipher"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// sealInPieces seals pt with a Sealer under iv, writing it in pieces of the
// sizes next gives, and returns the ciphertext and tag.
func sealInPieces(t testing.TB, key *Key, iv []byte, aad string, pt []byte, chunk int, next func() int) ([]byte, []byte) {
	t.Helper()
	var out bytes.Buffer
	s := key.newSealerIV(iv, aad, &out, chunk)
	for rest := pt; len(rest) > 0; {
		n := min(next(), len(rest))
		if w, err := s.Write(rest[:n]); err != nil || w != n {
			t.Fatalf("Write = %d, %v; want %d", w, err, n)
		}
		rest = rest[n:]
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.IV(), iv) {
		t.Fatal("IV() is not the iv")
	}
	return out.Bytes(), s.Tag()
}

// TestSealerMatchesSeal holds the streaming sealer to the one-shot one and
// to go-jose's AEAD: for the same key, iv, additional data and plaintext,
// written whole, a byte at a time, in random pieces or in pieces around the
// sealer's chunk, the same ciphertext and tag byte for byte.
func TestSealerMatchesSeal(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, 2))
	pieces := map[string]func(n int) func() int{
		"whole":        func(n int) func() int { return func() int { return n } },
		"byte by byte": func(int) func() int { return func() int { return 1 } },
		"random":       func(int) func() int { return func() int { return 1 + r.IntN(3*sealChunk) } },
		"chunk+1":      func(int) func() int { return func() int { return sealChunk + 1 } },
	}
	sizes := append(testkit.PayloadSizes(t), sealChunk-1, sealChunk, sealChunk+1, 2*sealChunk, 3*sealChunk-BlockSize)
	for _, n := range sizes {
		cek, iv, pt := testkit.RandomBytes(KeySize), testkit.RandomBytes(IVSize), testkit.RandomBytes(n)
		aad := string(testkit.RandomBytes(n % 89))
		key, _ := NewKey(cek)
		aead, _ := josecipher.NewCBCHMAC(cek, aes.NewCipher)
		wantCT, wantTag := key.sealIV(iv, aad, pt)
		for name, piece := range pieces {
			if name == "byte by byte" && n > 4096 {
				continue
			}
			t.Run(fmt.Sprintf("%d bytes/%s", n, name), func(t *testing.T) {
				ct, tag := sealInPieces(t, key, iv, aad, pt, sealChunk, piece(n))
				if !bytes.Equal(ct, wantCT) || !bytes.Equal(tag, wantTag) {
					t.Fatal("streamed ciphertext or tag differs from Seal's")
				}
				if int64(len(ct)) != CiphertextSize(int64(n)) {
					t.Fatalf("ciphertext of %d bytes, CiphertextSize says %d", len(ct), CiphertextSize(int64(n)))
				}
				got, err := aead.Open(nil, iv, append(bytes.Clone(ct), tag...), []byte(aad))
				if err != nil || !bytes.Equal(got, pt) {
					t.Fatalf("go-jose does not open it to the plaintext: %v", err)
				}
			})
		}
	}
}

// failingWriter fails every write after the first ok bytes.
type failingWriter struct{ ok int }

var errWriter = errors.New("the destination failed")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.ok {
		return 0, errWriter
	}
	w.ok -= len(p)
	return len(p), nil
}

// TestSealerErrors: a destination's error comes back from Write or Close,
// and a Sealer refuses to be used after Close.
func TestSealerErrors(t *testing.T) {
	key, _ := NewKey(bytes.Repeat([]byte{3}, KeySize))
	tests := []struct {
		name  string
		ok    int // bytes the destination takes
		write int // plaintext bytes written before Close
	}{
		{"fails on a chunk", 0, 2 * sealChunk},
		{"fails on the last block", sealChunk, sealChunk + 5},
		{"fails on the only block", 0, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := key.NewSealer("aad", &failingWriter{ok: tt.ok})
			_, werr := s.Write(make([]byte, tt.write))
			cerr := s.Close()
			if !errors.Is(werr, errWriter) && !errors.Is(cerr, errWriter) {
				t.Fatalf("Write: %v, Close: %v; want the destination's error", werr, cerr)
			}
		})
	}
	s := key.NewSealer("aad", &bytes.Buffer{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("x")); err != ErrSealerClosed {
		t.Fatalf("Write after Close: %v", err)
	}
	if err := s.Close(); err != ErrSealerClosed {
		t.Fatalf("Close twice: %v", err)
	}
}

// FuzzSealer seals arbitrary plaintexts in arbitrary pieces, with chunks
// of one to eight blocks so that short inputs cross chunk boundaries, holds
// the result to Seal's, and opens it back.
func FuzzSealer(f *testing.F) {
	f.Add([]byte(""), []byte("aad"), uint16(0), uint8(0))
	f.Add(bytes.Repeat([]byte("x"), 100), []byte(""), uint16(7), uint8(1))
	f.Add(bytes.Repeat([]byte("y"), 64), []byte("aad"), uint16(31), uint8(3))
	key, _ := NewKey(bytes.Repeat([]byte{9}, KeySize))
	iv := bytes.Repeat([]byte{1}, IVSize)
	f.Fuzz(func(t *testing.T, pt, aad []byte, piece uint16, blocks uint8) {
		chunk := BlockSize * (1 + int(blocks%8))
		ct, tag := sealInPieces(t, key, iv, string(aad), pt, chunk, func() int { return 1 + int(piece) })
		wantCT, wantTag := key.sealIV(iv, string(aad), pt)
		if !bytes.Equal(ct, wantCT) || !bytes.Equal(tag, wantTag) {
			t.Fatal("streamed output differs from Seal's")
		}
		s := Sealed{AAD: string(aad), Size: int64(len(ct))}
		copy(s.IV[:], iv)
		copy(s.Tag[:], tag)
		if got, err := key.Decrypt(&s, ct); err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("does not open: %v", err)
		}
	})
}

// discard is io.Discard without its ReadFrom, so that a benchmark measures
// the sealer's own writes.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkSealer measures sealing 16 MiB as a stream, written in 64 KiB
// pieces, beside the one-shot Seal: about the same speed, with a constant
// 32 KiB of memory instead of the plaintext's size.
func BenchmarkSealer(b *testing.B) {
	key, _ := NewKey(testkit.RandomBytes(KeySize))
	const n = 16 << 20
	pt := testkit.RandomBytes(n)
	b.Run("impl=stream", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			s := key.NewSealer("aad", discard{})
			for off := 0; off < n; off += 64 << 10 {
				_, _ = s.Write(pt[off : off+64<<10])
			}
			_ = s.Close()
		}
	})
	b.Run("impl=oneshot", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			key.Seal("aad", pt)
		}
	})
}
