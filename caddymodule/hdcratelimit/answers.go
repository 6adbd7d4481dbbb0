package hdcratelimit

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/health-data-connect/hdc/caddymodule/ratelimit"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// The fields of draft-ietf-httpapi-ratelimit-headers-11, as net/http
// spells their keys.
var (
	fieldPolicy = http.CanonicalHeaderKey("RateLimit-Policy")
	fieldStatus = http.CanonicalHeaderKey("RateLimit")
)

// answer collects the policies a request was counted under, for the
// RateLimit-Policy and RateLimit fields of its answer.
type answer struct {
	policies []ratelimit.Policy
	statuses []ratelimit.Status
}

// add notes a policy and its state after the request.
func (a *answer) add(p ratelimit.Policy, remaining int64, reset time.Duration) {
	a.policies = append(a.policies, p)
	a.statuses = append(a.statuses, ratelimit.Status{Name: p.Name, Remaining: remaining, Reset: reset})
}

// restate sets the state of the policy added last: an upload's quota,
// once its body was counted.
func (a *answer) restate(remaining int64, reset time.Duration) {
	last := &a.statuses[len(a.statuses)-1]
	last.Remaining, last.Reset = remaining, reset
}

// write sets the fields on w's header, when the request was counted.
func (a *answer) write(w http.ResponseWriter) {
	if len(a.policies) == 0 {
		return
	}
	policy, err := ratelimit.PolicyField(a.policies...)
	if err != nil { // cannot happen: the names are the classes', the numbers integers
		return
	}
	status, err := ratelimit.StatusField(a.statuses...)
	if err != nil {
		return
	}
	h := w.Header()
	h[fieldPolicy] = []string{policy} // canonical keys: no canonicalizing on every answer
	h[fieldStatus] = []string{status}
}

// rateLimited is the problem of a request over rate, and its Retry-After.
func rateLimited(class contract.RouteClass, rate contract.Rate, res ratelimit.Result) (*problem.Problem, int64) {
	return problem.New(http.StatusTooManyRequests, problem.CodeRateLimited, fmt.Sprintf("Over the limit of %s requests a second (burst %d) on %s routes; retry after %d s.",
		strconv.FormatFloat(rate.PerSecond, 'f', -1, 64), rate.Burst, class, retryAfter(res.RetryAfter))), retryAfter(res.RetryAfter)
}

// quotaExceeded is the problem of an upload that would pass the quota,
// and its Retry-After: when the quota starts again.
func quotaExceeded(quota, n int64, s ratelimit.Spent) (*problem.Problem, int64) {
	return problem.New(http.StatusTooManyRequests, problem.CodeQuotaExceeded, fmt.Sprintf("This upload of %s would pass the daily upload quota of %s (%s left today); it starts again at midnight UTC.",
		humanize.IBytes(uint64(n)), humanize.IBytes(uint64(quota)), humanize.IBytes(uint64(s.Remaining)))), retryAfter(s.ResetAfter)
}

// quotaPassed is the problem of an upload of unknown length whose bytes
// passed the quota after read of them, and its Retry-After: when the quota
// starts again.
func quotaPassed(quota, read int64, s ratelimit.Spent) (*problem.Problem, int64) {
	return problem.New(http.StatusTooManyRequests, problem.CodeQuotaExceeded, fmt.Sprintf("This upload, of a length it did not declare, passed the daily upload quota of %s after %s (%s left today); it starts again at midnight UTC.",
		humanize.IBytes(uint64(quota)), humanize.IBytes(uint64(read)), humanize.IBytes(uint64(s.Remaining)))), retryAfter(s.ResetAfter)
}

// retryAfter is d in whole seconds for Retry-After: at least 1.
func retryAfter(d time.Duration) int64 { return max(1, ratelimit.Seconds(d)) }
