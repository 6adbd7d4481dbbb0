package main

import (
	"crypto/rand"
	"encoding/base64"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/health-data-connect/hdc/internal/jwe"
)

// codecRow compares this codec with go-jose on envelopes held in memory,
// at one payload size and content encryption: opening a request envelope
// (parse + decrypt; the fields without "seal", named as when decryption
// was all this part measured) and sealing a response (encrypt +
// serialize).
type codecRow struct {
	Payload        string  `json:"payload"`
	Enc            string  `json:"enc"`
	HDCMBps        float64 `json:"hdc_mb_per_s"`
	GoJoseMBps     float64 `json:"gojose_mb_per_s"`
	Ratio          float64 `json:"ratio"`
	HDCAllocs      int64   `json:"hdc_allocs_per_op"`
	GoJoseAllocs   int64   `json:"gojose_allocs_per_op"`
	HDCBytesOp     int64   `json:"hdc_bytes_per_op"`
	GoJoseBytesOp  int64   `json:"gojose_bytes_per_op"`
	HDCSealMBps    float64 `json:"hdc_seal_mb_per_s"`
	GoJoseSealMBps float64 `json:"gojose_seal_mb_per_s"`
	SealRatio      float64 `json:"seal_ratio"`
	OpenUs         float64 `json:"hdc_open_us"`
	SealUs         float64 `json:"hdc_seal_us"`
	OpenSealUs     float64 `json:"hdc_open_seal_us"`
}

var codecSizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}, {"16MiB", 16 << 20}}

// codecEncs are the content encryptions the codec is measured with.
var codecEncs = []string{jwe.EncA128CBCHS256, jwe.EncA256GCM}

// benchKey is a key of the bench: its kid, its secret as a client key
// stores it, the codec's key, and the content-encryption key as go-jose
// takes it.
type benchKey struct {
	kid    string
	secret string
	key    *jwe.CEK
	cek    []byte
}

// newBenchKey returns the bench's A128CBC-HS256 key (benchKid, whose
// secret is benchSecret) or a new A256GCM key (benchGCMKid).
func newBenchKey(enc string) (benchKey, error) {
	k := benchKey{kid: benchKid, secret: benchSecret}
	if enc == jwe.EncA256GCM {
		k = benchKey{kid: benchGCMKid, secret: jwe.NewGCMSecret()}
	}
	var err error
	if k.key, err = jwe.NewKeyFor(enc, k.secret); err != nil {
		return k, err
	}
	// go-jose takes the shared string twice for A128CBC-HS256, the
	// decoded secret for A256GCM.
	k.cek = []byte(k.secret + k.secret)
	if enc == jwe.EncA256GCM {
		k.cek, err = base64.RawURLEncoding.DecodeString(k.secret)
	}
	return k, err
}

// sealRequest seals pt as a request envelope under k. Under an A256GCM
// key it names iat (now) and a new jti, as the edge requires of every
// envelope under such a key: each call makes an envelope the edge has not
// seen.
func (k benchKey) sealRequest(pt []byte) []byte {
	p := jwe.Protected{Kid: k.kid}
	if k.key.Enc() == jwe.EncA256GCM {
		p = jwe.Fresh(k.kid)
	}
	return jwe.EncryptRequest(k.key, p, pt)
}

// rowName names a row of payload size under enc: the size alone for
// A128CBC-HS256, as the rows were named before there was another enc.
func rowName(size, enc string) string {
	if enc == jwe.EncA128CBCHS256 {
		return size
	}
	return size + " " + enc
}

// benchCodec measures, with testing.Benchmark, opening and sealing with
// this codec and with go-jose, for each size and content encryption.
func benchCodec() ([]codecRow, error) {
	keys := map[string]benchKey{}
	for _, enc := range codecEncs {
		k, err := newBenchKey(enc)
		if err != nil {
			return nil, err
		}
		keys[enc] = k
	}
	var rows []codecRow
	for _, size := range codecSizes {
		for _, enc := range codecEncs {
			row, err := codecCase(keys[enc], size.name, size.n)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// codecCase measures one row: a payload of n random bytes under k, opened
// and sealed by this codec (jwe.Parse + Decrypt, jwe.EncryptResponse) and
// by go-jose (ParseEncryptedJSON + Decrypt; NewEncrypter + Encrypt +
// FullSerialize).
func codecCase(k benchKey, size string, n int) (codecRow, error) {
	pt := make([]byte, n)
	_, _ = rand.Read(pt)
	env := k.sealRequest(pt)
	envText := string(env)
	ops := []func() error{
		func() error { return ourOpen(k.key, env) },
		func() error { _ = jwe.EncryptResponse(k.key, k.kid, pt); return nil },
		func() error { return joseOpen(k, envText) },
		func() error { return joseSeal(k, pt) },
	}
	rs := make([]testing.BenchmarkResult, len(ops))
	for i, op := range ops {
		var err error
		if rs[i], err = benchOp(n, op); err != nil {
			return codecRow{}, err
		}
	}
	ours, oursSeal, theirs, theirsSeal := rs[0], rs[1], rs[2], rs[3]
	return codecRow{
		Payload: rowName(size, k.key.Enc()), Enc: k.key.Enc(),
		HDCMBps: mbps(ours, n), GoJoseMBps: mbps(theirs, n), Ratio: mbps(ours, n) / mbps(theirs, n),
		HDCAllocs: ours.AllocsPerOp(), GoJoseAllocs: theirs.AllocsPerOp(),
		HDCBytesOp: ours.AllocedBytesPerOp(), GoJoseBytesOp: theirs.AllocedBytesPerOp(),
		HDCSealMBps: mbps(oursSeal, n), GoJoseSealMBps: mbps(theirsSeal, n),
		SealRatio: mbps(oursSeal, n) / mbps(theirsSeal, n),
		OpenUs:    usPerOp(ours), SealUs: usPerOp(oursSeal), OpenSealUs: usPerOp(ours) + usPerOp(oursSeal),
	}, nil
}

// requestOpenSealUs measures, in µs per request, the codec's share of the
// work the edge does for one request of the proxy bench: open that
// request's envelope of payload under k, and seal the upstream's answer
// to it (upstreamAnswer) as the response.
func requestOpenSealUs(k benchKey, payload []byte) (float64, error) {
	env := k.sealRequest(payload)
	answer := upstreamAnswer(int64(len(payload)))
	r, err := benchOp(len(payload), func() error {
		if err := ourOpen(k.key, env); err != nil {
			return err
		}
		_ = jwe.EncryptResponse(k.key, k.kid, answer)
		return nil
	})
	return usPerOp(r), err
}

// benchOp runs op under testing.Benchmark, n bytes an operation; an error
// of op ends the benchmark and is returned.
func benchOp(n int, op func() error) (testing.BenchmarkResult, error) {
	var failed error
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(n))
		for b.Loop() {
			if err := op(); err != nil {
				failed = err
				b.FailNow()
			}
		}
	})
	return r, failed
}

// ourOpen opens a request envelope with this codec: Parse, then Decrypt.
func ourOpen(k *jwe.CEK, env []byte) error {
	e, ct, err := jwe.Parse(env, jwe.Request)
	if err == nil {
		_, err = e.Decrypt(k, ct)
	}
	return err
}

// joseOpen opens a request envelope with go-jose.
func joseOpen(k benchKey, env string) error {
	obj, err := jose.ParseEncryptedJSON(env, []jose.KeyAlgorithm{jose.DIRECT},
		[]jose.ContentEncryption{jose.ContentEncryption(k.key.Enc())})
	if err == nil {
		_, err = obj.Decrypt(k.cek)
	}
	return err
}

// joseSeal seals pt with go-jose, as a server using it would seal a
// response: a direct encrypter, Encrypt, FullSerialize.
func joseSeal(k benchKey, pt []byte) error {
	enc, err := jose.NewEncrypter(jose.ContentEncryption(k.key.Enc()),
		jose.Recipient{Algorithm: jose.DIRECT, Key: k.cek, KeyID: k.kid}, nil)
	if err != nil {
		return err
	}
	obj, err := enc.Encrypt(pt)
	if err != nil {
		return err
	}
	_ = obj.FullSerialize()
	return nil
}

func mbps(r testing.BenchmarkResult, n int) float64 {
	return float64(n) * float64(r.N) / r.T.Seconds() / 1e6
}

// usPerOp is a benchmark's time per operation in microseconds.
func usPerOp(r testing.BenchmarkResult) float64 {
	return r.T.Seconds() * 1e6 / float64(r.N)
}
