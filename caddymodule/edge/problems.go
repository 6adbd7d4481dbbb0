package edge

import (
	"errors"
	"net/http"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/health-data-connect/hdc/caddymodule/spool"
	"github.com/health-data-connect/hdc/internal/problem"
)

// The answers more than one handler gives to a request whose body could
// not be read. Their codes are stable; docs/errors.md lists them. Each
// handler's own answers are in its package.
var (
	// errBodyRead answers a body the client did not send whole.
	errBodyRead = problem.New(http.StatusBadRequest, problem.CodeInvalidRequest,
		"The request body could not be read.")
	// errSpool answers a body the edge could not hold (its disk failed).
	errSpool = problem.New(http.StatusInternalServerError, problem.CodeInternalError,
		"The edge could not buffer the request.")
	// ErrPassedQuota marks a body that hdc_ratelimit metered and stopped,
	// as it passed its client's quota: the handler that read it returns
	// ErrQuotaPassed, and hdc_ratelimit answers with the quota's fields.
	ErrPassedQuota = problem.New(http.StatusTooManyRequests, problem.CodeQuotaExceeded,
		"This upload passed the daily upload quota.")
)

// ErrQuotaPassed is a metered body's read error once its bytes would pass
// its client's daily quota (hdc_ratelimit meters the body of an upload of
// unknown length). A handler that fails on it returns it, and
// hdc_ratelimit, which metered the body, answers 429 quota_exceeded.
var ErrQuotaPassed = errors.New("the upload passed its client's daily upload quota")

// TooLarge is the problem for a body over the route's limit, which it
// states, as the edge's own 413 answers do.
func TooLarge(limit int64) *problem.Problem {
	return problem.New(http.StatusRequestEntityTooLarge, problem.CodePayloadTooLarge,
		"The request body exceeds this route's limit of "+strings.ReplaceAll(humanize.IBytes(uint64(limit)), " ", "")+".")
}

// ReadProblem maps an error reading a request's body into a spool to the
// client's answer: ErrPassedQuota when hdc_ratelimit stopped it, errSpool
// when the spool failed, 413 past request_body's limit, else errBodyRead;
// nil for no error.
func ReadProblem(err error) *problem.Problem {
	if err == nil { // before the targets of errors.As, which escape
		return nil
	}
	var mbe *http.MaxBytesError
	var se *spool.Error
	switch {
	case errors.Is(err, ErrQuotaPassed):
		return ErrPassedQuota
	case errors.As(err, &se):
		return errSpool
	case errors.As(err, &mbe): // request_body's limit, below the route's
		return TooLarge(mbe.Limit)
	default:
		return errBodyRead
	}
}
