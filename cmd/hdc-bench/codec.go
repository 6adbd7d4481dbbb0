package main

import (
	"crypto/rand"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/health-data-connect/hdc/internal/jwe"
)

// codecRow compares decrypting one request envelope held in memory.
type codecRow struct {
	Payload       string  `json:"payload"`
	HDCMBps       float64 `json:"hdc_mb_per_s"`
	GoJoseMBps    float64 `json:"gojose_mb_per_s"`
	Ratio         float64 `json:"ratio"`
	HDCAllocs     int64   `json:"hdc_allocs_per_op"`
	GoJoseAllocs  int64   `json:"gojose_allocs_per_op"`
	HDCBytesOp    int64   `json:"hdc_bytes_per_op"`
	GoJoseBytesOp int64   `json:"gojose_bytes_per_op"`
}

var codecSizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}, {"16MiB", 16 << 20}}

// benchCodec measures parse + decrypt with this codec and with go-jose's
// ParseEncryptedJSON + Decrypt, with testing.Benchmark.
func benchCodec() []codecRow {
	key, _ := jwe.NewKey(benchSecret)
	cek := []byte(benchSecret + benchSecret)
	var rows []codecRow
	for _, size := range codecSizes {
		pt := make([]byte, size.n)
		_, _ = rand.Read(pt)
		env := jwe.EncryptRequest(key, benchKid, pt)
		ours := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size.n))
			for b.Loop() {
				e, ct, err := jwe.Parse(env, jwe.Request)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.Decrypt(key, ct); err != nil {
					b.Fatal(err)
				}
			}
		})
		theirs := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size.n))
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
		rows = append(rows, codecRow{
			Payload: size.name, HDCMBps: mbps(ours, size.n), GoJoseMBps: mbps(theirs, size.n),
			Ratio: mbps(ours, size.n) / mbps(theirs, size.n), HDCAllocs: ours.AllocsPerOp(), GoJoseAllocs: theirs.AllocsPerOp(),
			HDCBytesOp: ours.AllocedBytesPerOp(), GoJoseBytesOp: theirs.AllocedBytesPerOp(),
		})
	}
	return rows
}

func mbps(r testing.BenchmarkResult, n int) float64 {
	return float64(n) * float64(r.N) / r.T.Seconds() / 1e6
}
