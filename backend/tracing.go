package backend

import (
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/health-data-connect/hdc/internal/contract"
)

// tracer makes the backend's request spans, through OpenTelemetry's global
// provider, which the program configures (telemetry.Start).
var tracer = otel.Tracer("github.com/health-data-connect/hdc/backend")

// startSpan continues the trace a request carries (the edge's span, in the
// hop's traceparent) in a server span named by its route. It is written
// here rather than taken from otelhttp, whose server spans record the
// peer's address, the user agent and the path, which the backend's access
// log leaves out: the span has the route, the method, the listener and the
// status, as the log line has.
func startSpan(r *http.Request, listener, route string) (*http.Request, trace.Span) {
	ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := tracer.Start(ctx, route, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		semconv.HTTPRoute(route), semconv.HTTPRequestMethodKey.String(contract.Method(r.Method)),
		attribute.String("hdc.listener", listener)))
	return r.WithContext(ctx), span
}

// endSpan ends a request's span with the answer's status; a 5xx is an
// error of the span.
func endSpan(span trace.Span, status int) {
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	span.End()
}
