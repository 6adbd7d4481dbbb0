package jwe

import (
	"fmt"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// benchSizes are the plaintext sizes of the codec benchmarks.
var benchSizes = []int{1 << 10, 1 << 20, 16 << 20}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	default:
		return fmt.Sprintf("%dKiB", n>>10)
	}
}

// BenchmarkDecrypt measures parsing and decrypting a request envelope held
// in memory, with this codec and with go-jose, at each size. Throughput is
// in plaintext bytes.
func BenchmarkDecrypt(b *testing.B) {
	key, _ := NewKey(testShared)
	cek := []byte(testShared + testShared)
	for _, n := range benchSizes {
		env := EncryptRequest(key, Protected{Kid: "k1"}, testkit.RandomBytes(n))
		b.Run("codec="+"hdc/size="+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				e, ct, err := Parse(env, Request)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.Decrypt(key, ct); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("codec="+"gojose/size="+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			s := string(env)
			for b.Loop() {
				obj, err := jose.ParseEncryptedJSON(s, []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A128CBC_HS256})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := obj.Decrypt(cek); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncryptResponse measures sealing a response envelope.
func BenchmarkEncryptResponse(b *testing.B) {
	key, _ := NewKey(testShared)
	for _, n := range benchSizes {
		pt := testkit.RandomBytes(n)
		b.Run("size="+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				EncryptResponse(key, "k1", pt)
			}
		})
	}
}
