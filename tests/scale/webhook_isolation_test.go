package scale

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestSlowSubscribersDelayOnlyTheirWorkspace (hardening finding 2): a
// workspace with 100 subscribers that accept the connection and never
// answer does not delay another workspace's deliveries (p99 under 2 s),
// and its own endpoints are still retried on their schedule. The backend
// runs its default workers and per-workspace cap; only the attempt
// timeout and the backoff are shortened, to fit the test.
func TestSlowSubscribersDelayOnlyTheirWorkspace(t *testing.T) {
	const (
		endpoints = 100
		timeout   = 2 * time.Second
		base      = time.Second
		most      = 4 * time.Second
		window    = 25 * time.Second
		every     = 500 * time.Millisecond
		key       = "isolation-test-signing-key-0123456789"
	)
	dir := t.TempDir()
	slow, other := hdctest.CreateWebhookClient(t, dir, "slow"), hdctest.CreateWebhookClient(t, dir, "other")
	hang := newHangingServer(t)
	rc := hdctest.NewWebhookReceiver(t, key, 0)
	b := hdctest.StartWebhookBackend(t, dir, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.1/32", "HDC_WEBHOOK_POLL_INTERVAL=50ms",
		"HDC_WEBHOOK_TIMEOUT="+timeout.String(), "HDC_WEBHOOK_LEASE=5s",
		"HDC_WEBHOOK_BACKOFF_BASE="+base.String(), "HDC_WEBHOOK_BACKOFF_MAX="+most.String())
	for i := range endpoints {
		b.Subscribe(slow, fmt.Sprintf(`{"endpoint":"%s/hang/%d","signing_key":%q}`, hang.srv.URL, i, key))
	}
	b.Subscribe(other, `{"endpoint":"`+rc.Srv.URL+`/hook","signing_key":"`+key+`"}`)
	publish := func(ws string, n int) {
		status, answer := b.Post(b.Internal+contract.PathEvents,
			fmt.Sprintf(`{"type":"receipt.created","workspace_id":%q,"data":{"n":%d}}`, ws, n))
		if status != http.StatusAccepted {
			t.Fatalf("publish in %s: %d %s", ws, status, answer)
		}
	}

	started := time.Now()
	publish("slow", 0)
	var sent []time.Time // by n, in the other workspace
	for time.Since(started) < window {
		sent = append(sent, time.Now())
		publish("other", len(sent)-1)
		time.Sleep(every)
	}
	testkit.Eventually(t, 60*time.Second, "every delivery of the other workspace", func() bool {
		return len(rc.Deliveries()) >= len(sent)
	})

	latencies := otherLatencies(t, rc.Deliveries(), sent)
	p50, p99 := quantile(latencies, 0.50), quantile(latencies, 0.99)
	t.Logf("the other workspace: %d deliveries while the slow one's attempts hang; latency p50 %v, p99 %v, max %v",
		len(latencies), p50.Round(time.Millisecond), p99.Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond))
	if p99 >= 2*time.Second {
		t.Errorf("the other workspace's deliveries: p99 %v, want under 2 s", p99)
	}
	checkRetrySchedule(t, hang.attempts(), endpoints, timeout, base, most)
}

// otherLatencies returns, sorted, the time from each event's publication
// (sent, by its data.n) to its delivery.
func otherLatencies(t *testing.T, got []hdctest.WebhookDelivery, sent []time.Time) []time.Duration {
	t.Helper()
	first := map[int]time.Time{}
	for _, d := range got {
		n := payloadN(t, d.Body)
		if at, ok := first[n]; !ok || d.At.Before(at) {
			first[n] = d.At
		}
	}
	var out []time.Duration
	for n, at := range sent {
		if _, ok := first[n]; !ok {
			t.Fatalf("event %d of the other workspace was not delivered", n)
		}
		out = append(out, first[n].Sub(at))
	}
	slices.Sort(out)
	return out
}

// checkRetrySchedule checks the attempts at the hanging endpoints: each
// was retried, never before its backoff allowed (an attempt takes the
// timeout, then waits at least half its backoff, base·2ⁿ⁻¹ up to most),
// and it reports how much later than that the retries came.
func checkRetrySchedule(t *testing.T, attempts map[string][]time.Time, endpoints int, timeout, base, most time.Duration) {
	t.Helper()
	if len(attempts) != endpoints {
		t.Fatalf("%d of the %d hanging endpoints were attempted", len(attempts), endpoints)
	}
	var late []time.Duration
	fewest := -1
	for path, at := range attempts {
		if fewest < 0 || len(at) < fewest {
			fewest = len(at)
		}
		if len(at) < 2 {
			t.Errorf("%s: attempted %d times, never retried", path, len(at))
		}
		backoff := base
		for i := 1; i < len(at); i++ {
			earliest := timeout + backoff/2
			gap := at[i].Sub(at[i-1])
			if gap < earliest-100*time.Millisecond {
				t.Errorf("%s: attempt %d came %v after the one before, before its schedule (%v)", path, i+1, gap, earliest)
			}
			late = append(late, gap-timeout-backoff)
			backoff = min(2*backoff, most)
		}
	}
	slices.Sort(late)
	t.Logf("the slow workspace: every endpoint attempted at least %d times; retries later than their backoff by p50 %v, max %v",
		fewest, quantile(late, 0.5).Round(time.Millisecond), late[len(late)-1].Round(time.Millisecond))
}

// quantile returns the q-quantile of sorted (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted)) + 0.5)
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

// hangingServer accepts requests and never answers them: each handler
// waits until the client gives up. It records when each path was
// requested.
type hangingServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	at  map[string][]time.Time
}

func newHangingServer(t *testing.T) *hangingServer {
	h := &hangingServer{at: map[string][]time.Time{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.at[r.URL.Path] = append(h.at[r.URL.Path], time.Now())
		h.mu.Unlock()
		// Once the body is read, net/http watches the connection: the
		// request's context ends when the client gives up.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hangingServer) attempts() map[string][]time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]time.Time{}
	for p, at := range h.at {
		out[p] = slices.Clone(at)
	}
	return out
}

// payloadN returns data.n of a delivered payload.
func payloadN(t *testing.T, body []byte) int {
	t.Helper()
	var p struct{ Data struct{ N *int } }
	if err := json.Unmarshal(body, &p); err != nil || p.Data.N == nil {
		t.Fatalf("payload %s: %v", body, err)
	}
	return *p.Data.N
}
