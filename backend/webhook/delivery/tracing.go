package delivery

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// tracer makes the attempts' spans, through OpenTelemetry's global
// provider (no-op unless tracing is on).
var tracer = otel.Tracer("github.com/health-data-connect/hdc/backend/webhook/delivery")

// startAttempt starts the span of an attempt at dl: the root of a trace of
// its own, since the request that published the event ended long before,
// linked to that request's trace (the event's TraceParent). Its
// attributes are ids and the protocol: never the endpoint, whose URL may
// hold a receiver's secret, nor the message.
func startAttempt(ctx context.Context, dl store.Delivery) (context.Context, trace.Span) {
	return tracer.Start(ctx, "webhook attempt", trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithLinks(telemetry.LinkTo(dl.Event.TraceParent)...), trace.WithAttributes(
			attribute.String("hdc.delivery.id", dl.ID), attribute.String("hdc.event.id", dl.Event.ID),
			attribute.String("hdc.event.type", dl.Event.Type), attribute.String("hdc.workspace.id", dl.Event.WorkspaceID),
			attribute.String("hdc.subscription.id", dl.Subscription.ID), attribute.String("hdc.webhook.protocol", dl.Subscription.Protocol),
			attribute.Int("hdc.webhook.attempt", dl.Attempts+1)))
}

// endAttempt ends an attempt's span with its result: its outcome, the
// receiver's status when it answered, an error when not delivered.
func endAttempt(span trace.Span, r Result) {
	span.SetAttributes(attribute.String("hdc.outcome", r.Outcome))
	if r.StatusCode != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(r.StatusCode))
	}
	if !r.Delivered {
		span.SetStatus(codes.Error, r.Outcome)
	}
	span.End()
}
