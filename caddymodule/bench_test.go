package caddymodule

import (
	"bytes"
	"net/http"
	"os"
	"testing"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/jwe"
)

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
