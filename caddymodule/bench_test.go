package caddymodule

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// BenchmarkJWE measures the hdc_jwe handler alone for an encrypted
// request: read, verify and decrypt the envelope, stream the plaintext to a
// trivial next handler, and encrypt its JSON answer. benchstat-friendly:
//
//	go test -run '^$' -bench JWE -count 10 ./caddymodule/ | tee new.txt
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

// BenchmarkReferenceEdge sends an encrypted request of 1 KiB through the
// reference Caddyfile, in this process, as a client would: bearer check,
// JWE open, the hop's mutual TLS to a recording upstream, the encrypted
// answer, and the access log line (to /dev/null). Its allocs/op, the
// client's and the upstream's included, do not vary from run to run, so
// that a change to the edge's per-request allocations shows exactly:
//
//	go test -run '^$' -bench ReferenceEdge -count 5 ./caddymodule/
func BenchmarkReferenceEdge(b *testing.B) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = devNull // the access log's output, opened when the config loads
	b.Cleanup(func() { os.Stderr = stderr; devNull.Close() })
	e := startEdge(b, edgetest.Keys, map[string]string{"HDC_LOG_LEVEL": "error"})
	os.Stderr = stderr
	header := encHeaders(e.token("c1", nil))
	env := jwe.EncryptRequest(edgetest.Key(b, edgetest.SecretOf("k-c1")), jwe.Protected{Kid: "k-c1"}, jsonOf(1<<10))
	b.ReportAllocs()
	for b.Loop() {
		resp, _ := e.call(b, "POST", subscriptions, env, header)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// jsonOf is a JSON object of n bytes.
func jsonOf(n int) []byte {
	b := append([]byte(`{"d":"`), bytes.Repeat([]byte("a"), n-8)...)
	return append(b, `"}`...)
}
