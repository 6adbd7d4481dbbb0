package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// proxyRow compares plain Caddy with hdc-edge at one payload size and
// content encryption: the edge's added CPU time per request beside the
// codec's time for the JWE work of that request, measured in the same run.
type proxyRow struct {
	Payload        string  `json:"payload"`
	Enc            string  `json:"enc"`
	PlainRPS       float64 `json:"plain_rps"`
	EdgeRPS        float64 `json:"edge_rps"`
	Ratio          float64 `json:"ratio"`
	PlainP50Ms     float64 `json:"plain_p50_ms"`
	EdgeP50Ms      float64 `json:"edge_p50_ms"`
	AddedP50Ms     float64 `json:"added_p50_ms"`
	PlainP99Ms     float64 `json:"plain_p99_ms"`
	EdgeP99Ms      float64 `json:"edge_p99_ms"`
	PlainCPUUs     float64 `json:"plain_cpu_us_per_request"`
	EdgeCPUUs      float64 `json:"edge_cpu_us_per_request"`
	AddedCPUUs     float64 `json:"added_cpu_us_per_request"`
	CPURatioLo     float64 `json:"cpu_ratio_round_min"`
	CPURatioHi     float64 `json:"cpu_ratio_round_max"`
	CodecUs        float64 `json:"codec_open_seal_us"`
	AddedOverCodec float64 `json:"added_cpu_over_codec"`
	Requests       int     `json:"requests"`
	Concurrency    int     `json:"concurrency"`
	RoundSeconds   float64 `json:"round_seconds"`
	Rounds         int     `json:"rounds"`
	Edge           string  `json:"edge"`
	Notes          string  `json:"notes"`
}

var proxySizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"64KiB", 64 << 10}, {"1MiB", 1 << 20}}

// contender is one edge of the proxy bench at one payload size: the
// request it is sent, the key that request is sealed under (nil for plain
// Caddy), and what its load runs measured.
type contender struct {
	ed    *edge
	key   *benchKey
	req   request
	total loadResult
}

// breakdownRow is the edge's CPU per request at one payload size, stage by
// stage, each against plain Caddy's: the edge's route alone (a handle
// block), with hdc_auth, and the whole edge (the A128CBC-HS256 row's).
type breakdownRow struct {
	Payload    string  `json:"payload"`
	PlainCPUUs float64 `json:"plain_cpu_us_per_request"`
	HandleCPU  float64 `json:"handle_cpu_us_per_request"`
	AuthCPU    float64 `json:"auth_cpu_us_per_request"`
	EdgeCPU    float64 `json:"edge_cpu_us_per_request"`
}

// benchProxy runs plain Caddy and hdc-edge, with the A128CBC-HS256 key
// from the registry file and with the A256GCM key from the key plane, in
// turns at each payload size; with o.breakdown, the breakdown's two stages
// too.
func benchProxy(ctx context.Context, env *benchEnv, o options) ([]proxyRow, []breakdownRow, error) {
	names := []string{plainEdge, registryEdge, planeEdge}
	if o.breakdown {
		names = append(names, handleEdge, authEdge)
	}
	eds, err := env.startEdges(o.profileDir != "", names...)
	if err != nil {
		return nil, nil, err
	}
	defer stopEdges(eds)
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: o.concurrency * 2, DisableCompression: true}}

	var rows []proxyRow
	var stages []breakdownRow
	for _, size := range proxySizes {
		if !listed(o.payloads, size.name) {
			continue
		}
		payload := jsonPayload(size.n)
		cs := env.contenders(eds, payload)
		if err := measure(ctx, client, cs, o, size.name); err != nil {
			return nil, nil, err
		}
		for _, c := range cs[1:3] {
			row, err := newProxyRow(size.name, cs[0], c, payload, o)
			if err != nil {
				return nil, nil, err
			}
			rows = append(rows, row)
		}
		if o.breakdown {
			stages = append(stages, newBreakdownRow(size.name, cs))
		}
	}
	return rows, stages, nil
}

// newBreakdownRow reads the stages' CPU from cs, as contenders orders
// them: plain Caddy, the two hdc-edges, the route alone, with hdc_auth.
func newBreakdownRow(size string, cs []*contender) breakdownRow {
	return breakdownRow{Payload: size, PlainCPUUs: cs[0].total.cpuPerRequest(),
		HandleCPU: cs[3].total.cpuPerRequest(), AuthCPU: cs[4].total.cpuPerRequest(), EdgeCPU: cs[1].total.cpuPerRequest()}
}

// contenders are what each of eds is sent with payload: plain Caddy the
// payload, each hdc-edge the payload sealed under its key, and each stage
// of the breakdown the A128CBC-HS256 edge's request, which it forwards
// as it is.
func (e *benchEnv) contenders(eds []*edge, payload []byte) []*contender {
	cs := []*contender{
		{ed: eds[0], req: e.plainRequest(payload)},
		{ed: eds[1], key: &e.cbc, req: e.encryptedRequest(e.cbc, echoPath, payload)},
		{ed: eds[2], key: &e.gcm, req: e.encryptedRequest(e.gcm, echoPath, payload)},
	}
	for _, ed := range eds[3:] {
		cs = append(cs, &contender{ed: ed, req: cs[1].req})
	}
	return cs
}

// measure makes sure each hdc-edge decrypts and encrypts, warms every edge
// up, then runs o.rounds rounds of one load run per edge, the order
// rotating from round to round so that drift hits all alike. With
// o.profileDir, it then profiles each edge under one more load.
func measure(ctx context.Context, client *http.Client, cs []*contender, o options, size string) error {
	for _, c := range cs {
		if c.key == nil {
			continue
		}
		if err := checkEncrypted(client, c.ed, c.req, c.key.key); err != nil {
			return err
		}
	}
	for _, c := range cs {
		if _, err := runLoad(ctx, client, c.ed, c.req, o.concurrency, o.duration/3); err != nil {
			return err
		}
	}
	for round := range o.rounds {
		for i := range cs {
			c := cs[(round+i)%len(cs)]
			r, err := measuredLoad(ctx, client, c, o)
			if err != nil {
				return err
			}
			c.total.add(r)
		}
	}
	if o.profileDir != "" {
		for _, c := range cs {
			if err := profileLoad(ctx, client, c.ed, c.req, o, size); err != nil {
				return err
			}
		}
	}
	return nil
}

// measuredLoad is one load run against c's edge, with the CPU time the
// edge used meanwhile.
func measuredLoad(ctx context.Context, client *http.Client, c *contender, o options) (*loadResult, error) {
	cpu0, err := c.ed.cpuTime()
	if err != nil {
		return nil, err
	}
	r, err := runLoad(ctx, client, c.ed, c.req, o.concurrency, o.duration)
	if err != nil {
		return nil, err
	}
	cpu1, err := c.ed.cpuTime()
	if err != nil {
		return nil, err
	}
	r.cpu = cpu1 - cpu0
	return r, nil
}

// newProxyRow compares hdc-edge h with plain Caddy p at payload, and
// measures the codec's time for the JWE work of one of h's requests.
func newProxyRow(size string, p, h *contender, payload []byte, o options) (proxyRow, error) {
	codecUs, err := requestOpenSealUs(*h.key, payload)
	if err != nil {
		return proxyRow{}, err
	}
	pt, ht, enc := &p.total, &h.total, h.key.key.Enc()
	added := ht.cpuPerRequest() - pt.cpuPerRequest()
	lo, hi := ht.roundRatios(pt)
	return proxyRow{
		Payload: rowName(size, enc), Enc: enc, PlainRPS: pt.rps(), EdgeRPS: ht.rps(), Ratio: ht.rps() / pt.rps(),
		PlainP50Ms: pt.percentile(50), EdgeP50Ms: ht.percentile(50), AddedP50Ms: ht.percentile(50) - pt.percentile(50),
		PlainP99Ms: pt.percentile(99), EdgeP99Ms: ht.percentile(99),
		PlainCPUUs: pt.cpuPerRequest(), EdgeCPUUs: ht.cpuPerRequest(),
		CPURatioLo: lo, CPURatioHi: hi, AddedCPUUs: added, CodecUs: codecUs, AddedOverCodec: added / codecUs,
		Requests: len(pt.latencies) + len(ht.latencies), Concurrency: o.concurrency,
		RoundSeconds: o.duration.Seconds(), Rounds: o.rounds, Edge: h.ed.name, Notes: proxyNotes(enc) + " " + codecNote,
	}, nil
}

// codecNote says what the codec column of every edge row is.
const codecNote = "codec µs/req: this codec opening the request's envelope and sealing the upstream's answer " +
	"(a few dozen bytes, not the payload: the upstream does not echo), the edge's JWE work for one request, " +
	"timed in this run; added/codec is the edge's added CPU per request over it."

// proxyNotes says how the rows of enc were measured.
func proxyNotes(enc string) string {
	if enc != jwe.EncA256GCM {
		return "hdc-edge with the key from a registry file; one envelope, made before the load, sent every time."
	}
	// The edge forwards each envelope's jti (X-Hdc-Jti) for the backend
	// to record and refuse a replay through any edge; the bench's
	// upstream is a stand-in that checks nothing, so that record's cost
	// is not in these figures.
	return "hdc-edge-keyplane with the key from a key plane (in the bench's process, over the hop's mutual TLS; " +
		"looked up once, then cached). The client seals every envelope as it sends it (iat now, a new jti), " +
		"outside the timed latency but on the same CPUs. The edge checks iat and its own memory of jtis; the " +
		"upstream is a stand-in that does not check the jti the edge forwards (X-Hdc-Jti), so the backend's " +
		"replay record is not measured."
}

// checkEncrypted makes sure the edge really decrypts and encrypts before it
// is measured: one request, its answer decrypted.
func checkEncrypted(client *http.Client, ed *edge, req request, key *jwe.CEK) error {
	resp, body, err := send(client, ed, req.sealed())
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get(contract.HeaderEncryption) != contract.EncryptionJWE {
		return fmt.Errorf("%s answered %d: %s", ed.name, resp.StatusCode, body)
	}
	e, ct, err := jwe.Parse(body, jwe.Flattened)
	if err == nil {
		_, err = e.Decrypt(key, ct)
	}
	return err
}

func send(client *http.Client, ed *edge, req request) (*http.Response, []byte, error) {
	r, err := http.NewRequest(http.MethodPost, ed.url+req.path, bytes.NewReader(req.body))
	if err != nil {
		return nil, nil, err
	}
	r.Header = req.header.Clone()
	resp, err := client.Do(r)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// loadResult is what a load run measured.
type loadResult struct {
	seconds   float64
	latencies []time.Duration
	cpu       time.Duration // the edge's CPU time during the run
	roundCPU  []float64     // of a total, each round's CPU µs per request
}

func (l *loadResult) add(o *loadResult) {
	l.seconds += o.seconds
	l.latencies = append(l.latencies, o.latencies...)
	l.cpu += o.cpu
	l.roundCPU = append(l.roundCPU, o.cpuPerRequest())
}

// roundRatios are the CPU per request of l over that of base, round by
// round: their spread shows how far one run's ratio can be trusted.
func (l *loadResult) roundRatios(base *loadResult) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range min(len(l.roundCPU), len(base.roundCPU)) {
		r := l.roundCPU[i] / base.roundCPU[i]
		lo, hi = min(lo, r), max(hi, r)
	}
	return lo, hi
}

// cpuPerRequest is the edge's CPU time per request served, in microseconds.
func (l *loadResult) cpuPerRequest() float64 {
	return float64(l.cpu.Microseconds()) / float64(len(l.latencies))
}

func (l *loadResult) rps() float64 { return float64(len(l.latencies)) / l.seconds }

// percentile returns the p-th percentile latency in milliseconds.
func (l *loadResult) percentile(p float64) float64 {
	if len(l.latencies) == 0 {
		return 0
	}
	s := slices.Clone(l.latencies)
	slices.Sort(s)
	i := min(int(float64(len(s))*p/100), len(s)-1)
	return float64(s[i].Microseconds()) / 1000
}

// runLoad keeps concurrency requests in flight against ed for d. Any
// answer but 200 fails the run: a failing edge must not look fast.
func runLoad(ctx context.Context, client *http.Client, ed *edge, req request, concurrency int, d time.Duration) (*loadResult, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu     sync.Mutex
		all    []time.Duration
		first  error
		wg     sync.WaitGroup
		errOne sync.Once
	)
	start := time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for ctx.Err() == nil {
				one := req.sealed() // before the clock starts
				t := time.Now()
				resp, body, err := send(client, ed, one)
				if err == nil && resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("%s answered %d: %.200s", ed.name, resp.StatusCode, body)
				}
				if err != nil {
					errOne.Do(func() { first = err; cancel() })
					break
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return &loadResult{seconds: time.Since(start).Seconds(), latencies: all}, nil
}

// profileLoad runs one more load against ed while its CPU profile and the
// allocations it made meanwhile are taken, and saves both in o.profileDir,
// with the number of requests served in the file names, so profiles compare
// per request.
func profileLoad(ctx context.Context, client *http.Client, ed *edge, req request, o options, size string) error {
	type outcome struct {
		r   *loadResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := runLoad(ctx, client, ed, req, o.concurrency, o.duration+time.Second)
		done <- outcome{r, err}
	}()
	secs := max(int(o.duration.Seconds()), 1)
	kinds := []string{"profile", "allocs"}
	profs := make([][]byte, len(kinds))
	errs := make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, kind := range kinds {
		wg.Go(func() { profs[i], errs[i] = fetchProfile(ed.admin, kind, secs) })
	}
	wg.Wait()
	out := <-done
	if err := errors.Join(append(errs, out.err)...); err != nil {
		return err
	}
	for i, name := range []string{"cpu", "allocs"} {
		path := filepath.Join(o.profileDir, fmt.Sprintf("%s-%s-%s-%dreq.pprof", ed.name, name, size, len(out.r.latencies)))
		if err := os.WriteFile(path, profs[i], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fetchProfile reads the pprof profile kind of the edge whose admin API
// listens on admin, over the next secs seconds.
func fetchProfile(admin, kind string, secs int) ([]byte, error) {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", admin, kind, secs))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s profile: %s", kind, resp.Status)
	}
	return io.ReadAll(resp.Body)
}
