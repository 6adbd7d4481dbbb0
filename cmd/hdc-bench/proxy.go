package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/jwe/cbchmac"
)

// proxyRow compares plain Caddy with hdc-edge at one payload size.
type proxyRow struct {
	Payload      string  `json:"payload"`
	PlainRPS     float64 `json:"plain_rps"`
	EdgeRPS      float64 `json:"edge_rps"`
	Ratio        float64 `json:"ratio"`
	PlainP50Ms   float64 `json:"plain_p50_ms"`
	EdgeP50Ms    float64 `json:"edge_p50_ms"`
	AddedP50Ms   float64 `json:"added_p50_ms"`
	PlainP99Ms   float64 `json:"plain_p99_ms"`
	EdgeP99Ms    float64 `json:"edge_p99_ms"`
	PlainCPUUs   float64 `json:"plain_cpu_us_per_request"`
	EdgeCPUUs    float64 `json:"edge_cpu_us_per_request"`
	Requests     int     `json:"requests"`
	Concurrency  int     `json:"concurrency"`
	RoundSeconds float64 `json:"round_seconds"`
	Rounds       int     `json:"rounds"`
}

var proxySizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"64KiB", 64 << 10}, {"1MiB", 1 << 20}}

// benchProxy runs plain Caddy and hdc-edge in turns at each payload size.
func benchProxy(ctx context.Context, env *benchEnv, o options) ([]proxyRow, error) {
	plain, err := env.startEdge("caddy", o.profileDir != "")
	if err != nil {
		return nil, err
	}
	defer plain.stop()
	hdc, err := env.startEdge("hdc-edge", o.profileDir != "")
	if err != nil {
		return nil, err
	}
	defer hdc.stop()
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: o.concurrency * 2, DisableCompression: true}}

	var rows []proxyRow
	for _, size := range proxySizes {
		payload := jsonPayload(size.n)
		reqs := map[*edge]request{plain: env.plainRequest(payload), hdc: env.encryptedRequest("/echo", payload)}
		if err := checkEncrypted(client, hdc, reqs[hdc], env.key); err != nil {
			return nil, err
		}
		// Warm both up, then alternate, so drift hits both alike.
		for _, ed := range []*edge{plain, hdc} {
			if _, err := runLoad(ctx, client, ed, reqs[ed], o.concurrency, o.duration/3); err != nil {
				return nil, err
			}
		}
		total := map[*edge]*loadResult{plain: {}, hdc: {}}
		for round := 0; round < o.rounds; round++ {
			order := []*edge{plain, hdc}
			if round%2 == 1 {
				order = []*edge{hdc, plain}
			}
			for _, ed := range order {
				cpu0, err := ed.cpuTime()
				if err != nil {
					return nil, err
				}
				r, err := runLoad(ctx, client, ed, reqs[ed], o.concurrency, o.duration)
				if err != nil {
					return nil, err
				}
				cpu1, err := ed.cpuTime()
				if err != nil {
					return nil, err
				}
				r.cpu = cpu1 - cpu0
				total[ed].add(r)
			}
		}
		if o.profileDir != "" {
			for _, ed := range []*edge{plain, hdc} {
				if err := profileLoad(ctx, client, ed, reqs[ed], o, size.name); err != nil {
					return nil, err
				}
			}
		}
		p, h := total[plain], total[hdc]
		rows = append(rows, proxyRow{
			Payload: size.name, PlainRPS: p.rps(), EdgeRPS: h.rps(), Ratio: h.rps() / p.rps(),
			PlainP50Ms: p.percentile(50), EdgeP50Ms: h.percentile(50), AddedP50Ms: h.percentile(50) - p.percentile(50),
			PlainP99Ms: p.percentile(99), EdgeP99Ms: h.percentile(99),
			PlainCPUUs: p.cpuPerRequest(), EdgeCPUUs: h.cpuPerRequest(), Requests: len(p.latencies) + len(h.latencies),
			Concurrency: o.concurrency, RoundSeconds: o.duration.Seconds(), Rounds: o.rounds,
		})
	}
	return rows, nil
}

// checkEncrypted makes sure the edge really decrypts and encrypts before it
// is measured: one request, its answer decrypted.
func checkEncrypted(client *http.Client, ed *edge, req request, key *cbchmac.Key) error {
	resp, body, err := send(client, ed, req)
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
}

func (l *loadResult) add(o *loadResult) {
	l.seconds += o.seconds
	l.latencies = append(l.latencies, o.latencies...)
	l.cpu += o.cpu
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
				t := time.Now()
				resp, body, err := send(client, ed, req)
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

// profileLoad runs one more load against ed while its CPU profile is taken,
// and saves the profile in o.profileDir, with the number of requests served
// meanwhile in the file name, so profiles compare per request.
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
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", ed.admin, secs))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	prof, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	out := <-done
	if out.err != nil {
		return out.err
	}
	path := filepath.Join(o.profileDir, fmt.Sprintf("%s-cpu-%s-%dreq.pprof", ed.name, size, len(out.r.latencies)))
	return os.WriteFile(path, prof, 0o644)
}
