package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// load is what a paced run of requests got.
type load struct {
	mu        sync.Mutex
	sent      int
	statuses  map[int]int
	latencies []time.Duration // of the requests served
	errs      []string        // each answer that broke the contract, once per kind
	elapsed   time.Duration
}

// drive sends GET requests of the subscriptions (a read) with tk at rate
// a second for d, round robin over bases, at most 64 at once, and checks
// each answer's rate limit fields: on every answer RateLimit-Policy and
// RateLimit of class, parsed by httpsfv (RFC 9651); on a 429, rate_limited
// and a Retry-After of whole seconds.
func drive(s *hdctest.Stack, bases []string, tk hdctest.Tokens, class string, rate int, d time.Duration) *load {
	l := &load{statuses: map[int]int{}}
	every := time.Second / time.Duration(rate)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; time.Since(start) < d; i++ {
		if wait := time.Until(start.Add(time.Duration(i) * every)); wait > 0 {
			time.Sleep(wait)
		}
		sem <- struct{}{}
		base := bases[i%len(bases)]
		wg.Go(func() {
			defer func() { <-sem }()
			at := time.Now()
			r, err := s.Request(base, "GET", hdctest.SubsPath, nil, hdctest.Bearer(tk))
			took := time.Since(at)
			l.record(r, err, took, class)
		})
	}
	wg.Wait()
	l.elapsed = time.Since(start)
	return l
}

// record notes one answer.
func (l *load) record(r *hdctest.Response, err error, took time.Duration, class string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
	if err != nil {
		l.note("request failed: " + err.Error())
		return
	}
	l.statuses[r.Status]++
	if r.Status == http.StatusOK {
		l.latencies = append(l.latencies, took)
	}
	if msg := checkRateLimitFields(r, class); msg != "" {
		l.note(msg)
	}
}

func (l *load) note(msg string) {
	if !slices.Contains(l.errs, msg) && len(l.errs) < 10 {
		l.errs = append(l.errs, msg)
	}
}

// p99 returns the 99th percentile of the served requests' latencies.
func (l *load) p99() time.Duration {
	if len(l.latencies) == 0 {
		return 0
	}
	s := slices.Clone(l.latencies)
	slices.Sort(s)
	return s[(len(s)*99)/100]
}

// checkRateLimitFields checks r's fields as draft-ietf-httpapi-ratelimit-headers-11
// says, for a policy named class; "" when they hold.
func checkRateLimitFields(r *hdctest.Response, class string) string {
	policy, err := httpsfv.UnmarshalList(r.Header.Values("RateLimit-Policy"))
	if err != nil || len(policy) == 0 {
		return fmt.Sprintf("%d: RateLimit-Policy %q: %v", r.Status, r.Header.Values("RateLimit-Policy"), err)
	}
	item, ok := policy[0].(httpsfv.Item)
	if q, _ := paramInt(item, "q"); !ok || item.Value != class || q <= 0 {
		return fmt.Sprintf("RateLimit-Policy %q: want an item %q with q", r.Header.Get("RateLimit-Policy"), class)
	}
	status, err := httpsfv.UnmarshalList(r.Header.Values("RateLimit"))
	if err != nil || len(status) == 0 {
		return fmt.Sprintf("%d: RateLimit %q: %v", r.Status, r.Header.Values("RateLimit"), err)
	}
	item, ok = status[0].(httpsfv.Item)
	left, okR := paramInt(item, "r")
	_, okT := paramInt(item, "t")
	if !ok || item.Value != class || !okR || !okT || left < 0 {
		return fmt.Sprintf("RateLimit %q: want an item %q with r and t", r.Header.Get("RateLimit"), class)
	}
	if r.Status == http.StatusTooManyRequests {
		if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
			return fmt.Sprintf("429 with Retry-After %q", r.Header.Get("Retry-After"))
		}
		var p struct{ Code string }
		if err := json.Unmarshal(r.Body, &p); err != nil || p.Code != "rate_limited" {
			return fmt.Sprintf("429 of code %q (%v)", p.Code, err)
		}
	}
	return ""
}

// paramInt returns the integer parameter name of item.
func paramInt(item httpsfv.Item, name string) (int64, bool) {
	v, ok := item.Params.Get(name)
	if !ok {
		return 0, false
	}
	n, ok := v.(int64)
	return n, ok
}
