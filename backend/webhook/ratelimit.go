package webhook

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Redelivery's rate per client: a burst of RedeliverBurst requests, then
// one every RedeliverEvery. Each replica counts its own.
const (
	RedeliverBurst = 10
	RedeliverEvery = time.Second
	// limiterIdle is how long an unused client's bucket is kept.
	limiterIdle = 10 * time.Minute
)

// clientLimits is a token bucket per client, in memory.
type clientLimits struct {
	every time.Duration
	burst int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	lim  *rate.Limiter
	used time.Time
}

func newClientLimits(every time.Duration, burst int) *clientLimits {
	return &clientLimits{every: every, burst: burst, now: time.Now, buckets: map[string]*bucket{}}
}

// take spends a token of client's bucket, or returns how long until one
// is there.
func (l *clientLimits) take(client string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.swept) > limiterIdle {
		for k, b := range l.buckets {
			if now.Sub(b.used) > limiterIdle {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b := l.buckets[client]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(rate.Every(l.every), l.burst)}
		l.buckets[client] = b
	}
	b.used = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

// limit refuses a client's request over its rate with 429
// too_many_requests and Retry-After.
func (l *clientLimits) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, _ := web.CallerFrom(r.Context())
		if wait := l.take(caller.ClientID); wait > 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
			problem.Write(w, problem.New(http.StatusTooManyRequests, problem.CodeTooManyRequests,
				"too many redeliveries from this client: try again after Retry-After seconds"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
