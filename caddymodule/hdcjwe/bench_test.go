package hdcjwe

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// BenchmarkJWE measures the hdc_jwe handler alone for an encrypted
// request: read, verify and decrypt the envelope, stream the plaintext to a
// trivial next handler, and encrypt its JSON answer. benchstat-friendly:
//
//	go test -run '^$' -bench JWE -count 10 ./caddymodule/hdcjwe/ | tee new.txt
func BenchmarkJWE(b *testing.B) {
	for _, n := range []int{1 << 10, 64 << 10, 1 << 20} {
		h := newTestJWE(b, false)
		h.MaxBody, h.SpoolThreshold = 8<<20, 1<<20
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = 'a' + byte(i%26)
		}
		env := jwe.EncryptRequest(edgetest.Key(b, edgetest.SecretOf("k-c1")), jwe.Protected{Kid: "k-c1"}, payload)
		next := &upstream{reply: []byte(`{"id":"w1","status":"success"}`)}
		b.Run(fmt.Sprintf("size=%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				w := serve(b, h, encryptedRequest("POST", "/x", env, "application/json"), "c1", next)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
