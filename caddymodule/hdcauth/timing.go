package hdcauth

import (
	"net/http"
	"time"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/internal/contract"
)

// timed serves fn and observes how long the answer took, in
// hdc_edge_request_duration_seconds by route (the API path template),
// method and status. A refusal that handle_errors answers after the
// handler returned counts with its status.
func timed(w http.ResponseWriter, r *http.Request, fn func(http.ResponseWriter) error) error {
	start := time.Now()
	route, method := contract.Route(r.URL.Path), contract.Method(r.Method)
	if span := trace.SpanFromContext(r.Context()); span.IsRecording() { // hdc_tracing's
		span.SetName(method + " " + route)
		span.SetAttributes(semconv.HTTPRoute(route))
	}
	code, err := edge.ServeStatus(w, fn)
	edge.Metrics.Duration(route, method, code).Observe(time.Since(start).Seconds())
	return err
}
