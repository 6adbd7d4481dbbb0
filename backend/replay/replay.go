// Package replay refuses an encrypted request whose jti was seen before
// under its key, whichever edge and backend of the deployment saw it
// first. The edge checks the envelope's iat against its freshness window
// and hands the jti on (contract.HeaderJTI) with the time after which the
// request would be stale anyway (contract.HeaderJTIExpires); the guard
// records the pair in the database every backend shares until then.
package replay

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// PruneEvery is how often a guard forgets the expired jtis.
const PruneEvery = time.Minute

var (
	errReplayed = problem.New(http.StatusBadRequest, problem.CodeReplayedRequest,
		"This request (its jti, under its key) was already received: send every request with a new jti.")
	errUnchecked = problem.New(http.StatusServiceUnavailable, problem.CodeNotReady,
		"The request could not be checked against the requests already received; try again.")
)

// Guard records the jtis of fresh requests. It is safe for concurrent use.
type Guard struct {
	store   store.Replays
	log     *zap.Logger
	now     func() time.Time
	results *prometheus.CounterVec
}

// New returns the guard of the requests recorded in s.
func New(s store.Replays, log *zap.Logger, reg prometheus.Registerer) (*Guard, error) {
	g := &Guard{store: s, log: log, now: time.Now, results: prometheus.NewCounterVec(metrics.Counter("fresh_requests_total",
		"Encrypted requests that named a jti, by result: new, replayed, or failed (the database did not answer)."), []string{"result"})}
	for _, result := range []string{"new", "replayed", "failed"} {
		g.results.WithLabelValues(result) // each at 0 from the start, so that a rate of replays reads 0, not nothing
	}
	return g, metrics.Register(reg, g.results)
}

// Check records the jti r names, if any, and refuses r when the pair of
// its kid and jti was recorded before (400 replayed_request): the request
// is then not served, so it changes nothing. When the database does not
// answer, r is refused too (503): a request that cannot be checked is not
// served. r's hop headers are checked already (web.CheckEdge).
func (g *Guard) Check(r *http.Request) *problem.Problem {
	jti := r.Header.Get(contract.HeaderJTI)
	if jti == "" {
		return nil
	}
	expires, _ := strconv.ParseInt(r.Header.Get(contract.HeaderJTIExpires), 10, 64)
	ctx, span := tracer.Start(r.Context(), "replay check")
	err := g.store.NoteRequest(ctx, r.Header.Get(contract.HeaderKeyID), jti, time.Unix(expires, 0), g.now())
	result, p := "new", (*problem.Problem)(nil)
	switch {
	case errors.Is(err, store.ErrConflict):
		result, p = "replayed", errReplayed
	case err != nil:
		result, p = "failed", errUnchecked
		telemetry.Logger(ctx, g.log).Error("recording a request's jti failed; the request is refused", zap.Error(err))
	}
	g.results.WithLabelValues(result).Inc()
	span.SetAttributes(attribute.String("hdc.outcome", result))
	span.End()
	return p
}

// tracer makes the replay check's span, through OpenTelemetry's global
// provider (no-op unless tracing is on).
var tracer = otel.Tracer("github.com/health-data-connect/hdc/backend/replay")

// Run forgets the expired jtis every PruneEvery until ctx is done.
func (g *Guard) Run(ctx context.Context) {
	tick := time.NewTicker(PruneEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n, err := g.store.PruneRequests(ctx, g.now()); err != nil && ctx.Err() == nil {
			g.log.Warn("forgetting expired request ids failed", zap.Error(err))
		} else if n > 0 {
			g.log.Debug("forgot expired request ids", zap.Int64("count", n))
		}
	}
}
