package cbchmac

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"runtime"
	"testing"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestPooledModes seals and opens under one key with IVs that change from
// call to call: a mode taken from the pool must start from its new IV, as
// a fresh one from crypto/cipher does, and the pool must spare the copy of
// the key schedule that making one costs.
func TestPooledModes(t *testing.T) {
	cek := bytes.Repeat([]byte{7}, KeySize)
	k, err := NewKey(cek)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(cek[macSize:])
	plaintext := bytes.Repeat([]byte("pooled "), 40)
	for i, iv := range [][]byte{bytes.Repeat([]byte{1}, IVSize), bytes.Repeat([]byte{2}, IVSize), bytes.Repeat([]byte{1}, IVSize)} {
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			ct, tag := k.sealIV(iv, "aad", plaintext)
			want := append(bytes.Clone(plaintext), bytes.Repeat([]byte{8}, 8)...) // 280 bytes, padded to 288
			cipher.NewCBCEncrypter(block, iv).CryptBlocks(want, want)
			if !bytes.Equal(ct, want) {
				t.Fatal("the ciphertext differs from a fresh CBC encrypter's")
			}
			s := &Sealed{AAD: "aad", IV: [IVSize]byte(iv), Tag: [TagSize]byte(tag), Size: int64(len(ct))}
			got, err := k.DecryptInPlace(s, bytes.Clone(ct))
			if err != nil || !bytes.Equal(got, plaintext) {
				t.Fatalf("open: %v", err)
			}
		})
	}
	// The race detector drops a quarter of what sync.Pool is given, so
	// counts of allocations do not hold under it.
	if testkit.RaceEnabled {
		return
	}
	ct, tag := k.sealIV(make([]byte, IVSize), "", plaintext)
	s := &Sealed{Tag: [TagSize]byte(tag), Size: int64(len(ct))}
	buf := make([]byte, len(ct))
	// A copy of the key schedule is 488 bytes; the rest of a call allocates
	// about a hundred.
	if n := bytesPerRun(100, func() {
		copy(buf, ct)
		if _, err := k.DecryptInPlace(s, buf); err != nil {
			t.Fatal(err)
		}
	}); n >= 256 {
		t.Errorf("DecryptInPlace allocates %.0f bytes a call: a CBC mode made afresh?", n)
	}
}

// bytesPerRun is testing.AllocsPerRun in bytes: what f allocates a call,
// on one P so that nothing else allocates meanwhile.
func bytesPerRun(runs int, f func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(runs)
}
