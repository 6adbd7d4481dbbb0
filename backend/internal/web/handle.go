package web

import (
	"errors"
	"net/http"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// HandlerFunc is a handler that returns its failure instead of writing it:
// it decodes the request, calls a service and encodes the answer, and
// returns a *problem.Problem for a request the client must correct, or a
// service's error.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ErrorMap maps the sentinel errors of a service to the problems that
// answer them.
type ErrorMap []struct {
	Err     error
	Problem *problem.Problem
}

// Problems turns the errors handlers return into RFC 9457 answers. One
// serves a group of handlers; its zero value maps only problems.
type Problems struct {
	// Known maps the sentinels of the handlers' services.
	Known ErrorMap
	// Log receives the errors that are the server's fault.
	Log *zap.Logger
	// Observe, when set, sees every problem answered with the name its
	// handler was adapted under (for failure metrics).
	Observe func(name string, p *problem.Problem)
}

// Of returns the problem that answers err: err itself, or the problem it
// wraps, or that of the first sentinel of Known it wraps. Any other error is
// the server's fault: Of returns internal_error, and internal is set.
func (ps *Problems) Of(err error) (p *problem.Problem, internal bool) {
	if errors.As(err, &p) {
		return p, false
	}
	for _, k := range ps.Known {
		if errors.Is(err, k.Err) {
			return k.Problem, false
		}
	}
	return Internal(), true
}

// Handler adapts fn: an error it returns is answered with Of's problem,
// and logged under name when it is the server's fault. Nothing must have
// been written when fn fails.
func (ps *Problems) Handler(name string, fn HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := fn(w, r)
		if err == nil {
			return
		}
		p, internal := ps.Of(err)
		if internal && ps.Log != nil {
			telemetry.Logger(r.Context(), ps.Log).Error("request failed", zap.String("handler", name), zap.Error(err))
		}
		if ps.Observe != nil {
			ps.Observe(name, p)
		}
		problem.Write(w, p)
	})
}
