package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/contract"
)

// BenchmarkLoginUnderBadLogins is what strangers' bad logins do to a valid
// client's login (second review, finding 3). Each round runs 256
// concurrent bad logins (unknown client ids, from 64 source addresses, as
// the edge names them) for a while and times valid logins meanwhile, then
// the same load on a cheap route (an unknown path, refused by the mux) as
// the control; rounds alternate, so the machine's drift falls on both. It
// reports both p50s and their ratio (goal: at most 1.5):
//
//	go test -run '^$' -bench LoginUnderBadLogins -benchtime 3x ./backend/
func BenchmarkLoginUnderBadLogins(b *testing.B) {
	const (
		attackers = 256
		sources   = 64
		phase     = 2 * time.Second
	)
	h := startLogged(b, zap.NewNop(), nil) // a real server on loopback, as the other tests run it
	c := h.client("bench")
	valid, _ := json.Marshal(map[string]string{"client_id": c.ClientID, "client_secret": c.ClientSecret})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * attackers, MaxConnsPerHost: 2 * attackers}}
	var underAttack, control []time.Duration
	for b.Loop() {
		underAttack = append(underAttack, loginsUnder(b, h, client, valid, phase, attackers, func(i int) *http.Request {
			body, _ := json.Marshal(map[string]string{"client_id": uuid.NewString(), "client_secret": "hdc_cs_a-stranger-guessing"})
			return loginRequest(h, body, fmt.Sprintf("198.51.100.%d", i%sources))
		})...)
		control = append(control, loginsUnder(b, h, client, valid, phase, attackers, func(i int) *http.Request {
			req, _ := http.NewRequest("GET", h.public+"/no-such-route", nil)
			req.Header.Set(contract.HeaderClientIP, fmt.Sprintf("198.51.100.%d", i%sources))
			req.Header.Set(contract.HeaderRequestID, uuid.NewString())
			return req
		})...)
	}
	a, ctl := p50(underAttack), p50(control)
	b.ReportMetric(float64(a.Microseconds())/1000, "p50-ms-bad-logins")
	b.ReportMetric(float64(ctl.Microseconds())/1000, "p50-ms-control")
	b.ReportMetric(float64(a)/float64(ctl), "ratio")
	b.ReportMetric(float64(len(underAttack)+len(control))/float64(b.N), "valid-logins/round")
}

// loginsUnder runs attackers goroutines sending load(i) requests for
// phase, and returns the durations of the valid logins (body valid) made
// one after the other meanwhile; a login still unanswered when the phase
// ends counts with the time it has waited so far.
func loginsUnder(b *testing.B, h *harness, client *http.Client, valid []byte, phase time.Duration,
	attackers int, load func(i int) *http.Request) []time.Duration {
	ctx, stop := context.WithTimeout(context.Background(), phase)
	defer stop()
	var wg sync.WaitGroup
	for i := range attackers {
		wg.Go(func() {
			for ctx.Err() == nil {
				if resp, err := client.Do(load(i).WithContext(ctx)); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	time.Sleep(phase / 10) // the load under way
	var took []time.Duration
	for ctx.Err() == nil {
		start := time.Now()
		resp, err := client.Do(loginRequest(h, valid, "192.0.2.10").WithContext(ctx))
		if err != nil {
			// Unanswered when the phase ended: it took at least this long.
			took = append(took, time.Since(start))
			break
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("a valid login: %d", resp.StatusCode)
		}
		took = append(took, time.Since(start))
	}
	wg.Wait()
	return took
}

// loginRequest is a login with body from the source address ip, as the
// edge forwards it.
func loginRequest(h *harness, body []byte, ip string) *http.Request {
	req, _ := http.NewRequest("POST", h.public+contract.PathLogin, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(contract.HeaderClientIP, ip)
	req.Header.Set(contract.HeaderRequestID, uuid.NewString())
	return req
}

// p50 is the median of ds.
func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
