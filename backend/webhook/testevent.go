package webhook

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Test events a subscription may be sent: testBurst at once, then one
// each testEvery, in each backend process.
const (
	testEvery = 6 * time.Second
	testBurst = 5
	// maxTestLimiters bounds the limiters kept; past it they start afresh.
	maxTestLimiters = 10000
)

// TestResult is how a test event's attempt went.
type TestResult struct {
	// EventID is the test event's webhook-id.
	EventID string
	// Outcome is the attempt's outcome: delivered, http_NNN, or the class
	// of failure (timeout, dns_error, address_refused, …).
	Outcome string
	// Status is the endpoint's HTTP status, 0 when it did not answer.
	Status   int
	Duration time.Duration
}

// Tester sends a subscription, its signing keys opened, a test event now
// (package delivery's Dispatcher).
type Tester interface {
	SendTest(ctx context.Context, sub store.Subscription) TestResult
}

// TestEvents sends subscriptions test events, each subscription within
// its ration: the public API's POST …/subscriptions/{id}/test
// (ServeHTTP, in the caller's workspace only) and the Admin API's (Take
// and SendTo, any workspace's, which package admin records first) go
// through it alike.
type TestEvents struct {
	store store.Subscriptions
	open  func(store.Subscription) store.Subscription
	send  Tester
	http  http.Handler

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// NewTestEvents returns the handler that reads subscriptions from st,
// opens their signing keys with open and sends with send.
func NewTestEvents(st store.Subscriptions, open func(store.Subscription) store.Subscription, send Tester, log *zap.Logger) *TestEvents {
	t := &TestEvents{store: st, open: open, send: send, limiters: map[string]*rate.Limiter{}}
	problems := &web.Problems{Known: web.ErrorMap{{Err: store.ErrNotFound, Problem: web.NotFound()}}, Log: log}
	t.http = problems.Handler("test", t.serve)
	return t
}

// TestAnswer is the answer to a test event.
type TestAnswer struct {
	EventID    string `json:"event_id"`
	Outcome    string `json:"outcome"`
	Status     int    `json:"status,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// AnswerOf is res as the APIs answer it.
func AnswerOf(res TestResult) TestAnswer {
	return TestAnswer{EventID: res.EventID, Outcome: res.Outcome, Status: res.Status, DurationMS: res.Duration.Milliseconds()}
}

// TooSoon refuses a test event while its subscription's ration is spent:
// Wait is how long until the next. It wraps its answer, a 429 problem,
// which goes with a Retry-After (SetRetryAfter).
type TooSoon struct{ Wait time.Duration }

// errTooSoon is the problem a TooSoon wraps.
var errTooSoon = problem.New(http.StatusTooManyRequests, problem.CodeTooManyRequests,
	"too many test events for this subscription; try again after the Retry-After seconds")

func (e *TooSoon) Error() string { return errTooSoon.Error() }

// Unwrap returns the problem that answers e.
func (e *TooSoon) Unwrap() error { return errTooSoon }

// SetRetryAfter sets w's Retry-After when err is a TooSoon, to the
// seconds its subscription's next test event waits for.
func SetRetryAfter(w http.ResponseWriter, err error) {
	var soon *TooSoon
	if errors.As(err, &soon) {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(soon.Wait.Seconds())), 10))
	}
}

// Take returns workspaceID's subscription id ("" for any workspace's)
// with a test event of its ration taken: store.ErrNotFound when there is
// none, a *TooSoon when the ration is spent. SendTo then sends it.
func (t *TestEvents) Take(ctx context.Context, workspaceID, id string) (store.Subscription, error) {
	sub, err := t.store.GetSubscription(ctx, workspaceID, id)
	if err != nil {
		return store.Subscription{}, err
	}
	if wait := t.reserve(sub.ID); wait > 0 {
		return store.Subscription{}, &TooSoon{Wait: wait}
	}
	return sub, nil
}

// SendTo sends sub, as Take returned it, a test event now, its signing
// keys opened, and says how the attempt went.
func (t *TestEvents) SendTo(ctx context.Context, sub store.Subscription) TestResult {
	return t.send.SendTest(ctx, t.open(sub))
}

// ServeHTTP serves the route.
func (t *TestEvents) ServeHTTP(w http.ResponseWriter, r *http.Request) { t.http.ServeHTTP(w, r) }

func (t *TestEvents) serve(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	sub, err := t.Take(r.Context(), caller.WorkspaceID, r.PathValue("id"))
	if err != nil {
		SetRetryAfter(w, err)
		return err
	}
	web.WriteJSON(w, http.StatusOK, AnswerOf(t.SendTo(r.Context(), sub)))
	return nil
}

// reserve takes a test event of subscription id from its limiter, or
// returns how long to wait for one.
func (t *TestEvents) reserve(id string) time.Duration {
	t.mu.Lock()
	l, ok := t.limiters[id]
	if !ok {
		if len(t.limiters) >= maxTestLimiters {
			clear(t.limiters)
		}
		l = rate.NewLimiter(rate.Every(testEvery), testBurst)
		t.limiters[id] = l
	}
	t.mu.Unlock()
	res := l.Reserve()
	if wait := res.Delay(); wait > 0 {
		res.Cancel()
		return wait
	}
	return 0
}
