package caddymodule

import (
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// BenchmarkRateLimitCost measures what hdc_ratelimit adds to an encrypted
// request of 1 KiB through the reference Caddyfile (BenchmarkReferenceEdge's
// path: bearer check, JWE open, the hop, the encrypted answer): the process's
// CPU time a request (cpu-ns/op, from getrusage: the client's and the
// upstream's are in it too, the same in every case) with no limit, with a
// limit counted in memory, and in Redis on loopback (HDC_TEST_REDIS_URL;
// skipped without it). The limit is never reached, so every request is
// served. In the same run:
//
//	go test -run '^$' -bench RateLimitCost -count 5 ./caddymodule/
func BenchmarkRateLimitCost(b *testing.B) {
	high := map[string]string{"HDC_RATELIMIT_WRITES": "1000000000", "HDC_RATELIMIT_WRITES_BURST": "1000000000"}
	cases := []struct {
		name string
		env  map[string]string
	}{
		{"none", nil},
		{"memory", high},
		{"redis", withEnv(withEnv(withEnv(high, "HDC_RATELIMIT_REDIS", os.Getenv("HDC_TEST_REDIS_URL")),
			"HDC_RATELIMIT_REDIS_PASSWORD_FILE", os.Getenv("HDC_TEST_REDIS_PASSWORD_FILE")), "HDC_RATELIMIT_REDIS_CA", os.Getenv("HDC_TEST_REDIS_CA"))},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			if tc.name == "redis" && tc.env["HDC_RATELIMIT_REDIS"] == "" {
				b.Skip("HDC_TEST_REDIS_URL is not set (scripts/redis.sh start DIR)")
			}
			benchEdgeCPU(b, withEnv(tc.env, "HDC_LOG_LEVEL", "error"))
		})
	}
}

// withEnv returns env with k set to v.
func withEnv(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for kk, vv := range env {
		if kk != k {
			out[kk] = vv
		}
	}
	return out
}

// benchEdgeCPU sends encrypted writes of 1 KiB through an edge started
// with env and reports the process's CPU time per request.
func benchEdgeCPU(b *testing.B, env map[string]string) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = devNull // the access log's output, opened when the config loads
	b.Cleanup(func() { os.Stderr = stderr; devNull.Close() })
	e := startEdge(b, edgetest.Keys, env)
	os.Stderr = stderr
	header := encHeaders(e.token("c1", nil))
	body := jwe.EncryptRequest(edgetest.Key(b, edgetest.SecretOf("k-c1")), jwe.Protected{Kid: "k-c1"}, jsonOf(1<<10))
	b.ReportAllocs()
	before := cpuTime(b)
	n := 0
	for b.Loop() {
		resp, _ := e.call(b, "POST", subscriptions, body, header)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-before)/float64(n), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
