package testkit

import (
	"crypto/rand"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// PayloadSizes are the edges of AES's block structure and 1 MiB, plus 24
// random sizes up to 1 MiB, or up to 64 KiB under the race detector, which
// slows the codecs' Go code some tenfold and finds nothing more in a
// larger buffer of one goroutine (the quick loop, scripts/test.sh
// --quick, draws them up to 1 MiB); the seed is logged so that a failure
// can be replayed.
func PayloadSizes(t testing.TB) []int {
	seed := mrand.Uint64()
	t.Logf("seed %d", seed)
	r := mrand.New(mrand.NewPCG(seed, seed))
	sizes := []int{0, 1, 15, 16, 17, 31, 32, 33, 1 << 20}
	largest := 1 << 20
	if RaceEnabled {
		largest = 64 << 10
	}
	for range 24 {
		sizes = append(sizes, r.IntN(largest+1))
	}
	return sizes
}

// RandomBytes returns n random bytes.
func RandomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// WriteFile writes content to a file in a test directory and returns its path.
func WriteFile(t testing.TB, name string, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
