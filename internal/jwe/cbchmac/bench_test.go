package cbchmac

import (
	"crypto/aes"
	"fmt"
	"testing"

	josecipher "github.com/go-jose/go-jose/v4/cipher"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// BenchmarkSeal measures sealing with this package and with go-jose's
// CBC-HMAC AEAD, the figure behind sealing by hand (see the package doc).
func BenchmarkSeal(b *testing.B) {
	cek := testkit.RandomBytes(KeySize)
	key, _ := NewKey(cek)
	aead, _ := josecipher.NewCBCHMAC(cek, aes.NewCipher)
	iv := testkit.RandomBytes(IVSize)
	for _, n := range []int{1 << 10, 16 << 20} {
		pt := testkit.RandomBytes(n)
		b.Run(fmt.Sprintf("impl=cbchmac/size=%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				key.Seal("aad", pt)
			}
		})
		b.Run(fmt.Sprintf("impl=gojose/size=%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				aead.Seal(nil, iv, pt, []byte("aad"))
			}
		})
	}
}
