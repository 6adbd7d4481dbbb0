// Package telemetry sets up OpenTelemetry tracing the standard way, from the
// OTEL_* environment variables, for every program: the edge (its
// hdc_tracing handler), the backend and hdc up.
//
// Tracing is on when the environment names an exporter:
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (OTLP,
// over OTEL_EXPORTER_OTLP_PROTOCOL), or OTEL_TRACES_EXPORTER other than
// "none" (for example "console", which writes spans to standard output).
// OTEL_SDK_DISABLED=true turns it off whatever else is set. Otherwise the
// tracer provider is OpenTelemetry's no-op one, which records nothing.
// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name the sampler, which
// a request's remote parent decides only where the program trusts it
// (NewSampler, DistrustParent). The SDK reads the rest itself:
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the resource),
// OTEL_PROPAGATORS (the propagators, W3C trace context and baggage by
// default), OTEL_BSP_* (batching).
package telemetry

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/contrib/propagators/autoprop"
	"go.opentelemetry.io/contrib/propagators/envcar"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
)

// Enabled reports whether the environment asks for traces to be exported.
func Enabled() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if e := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); e != "" {
		return e != "none"
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Start makes the global tracer provider and propagator those the
// environment configures, for a program named service unless
// OTEL_SERVICE_NAME names it otherwise. The returned function exports the
// spans not yet exported, within stopTimeout, and stops the exporter: call
// it before exiting. With tracing off, Start sets only the propagator, so
// that a trace context a request carries is still passed on.
func Start(ctx context.Context, service string) (stop func() error, err error) {
	otel.SetTextMapPropagator(autoprop.NewTextMapPropagator())
	if !Enabled() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		return func() error { return nil }, nil
	}
	sampler, err := NewSampler(os.Getenv("OTEL_TRACES_SAMPLER"), os.Getenv("OTEL_TRACES_SAMPLER_ARG"))
	if err != nil {
		return nil, err
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(service)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		return tp.Shutdown(ctx)
	}, nil
}

// stopTimeout bounds the export of the last spans when a program stops.
const stopTimeout = 5 * time.Second

// TraceParent is ctx's span context as a W3C traceparent, for a record
// that outlives the request (a webhook event); "" outside a trace.
func TraceParent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c.Get(traceparent)
}

// LinkTo is the link to the span that the W3C traceparent tp names, none
// when it names none.
func LinkTo(tp string) []trace.Link {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{traceparent: tp})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	return []trace.Link{{SpanContext: sc}}
}

// InjectEnv passes on, in h, the W3C trace context of the environment
// (TRACEPARENT and TRACESTATE: OpenTelemetry's environment carrier), so
// that a caller's trace (a script's, a CI job's) continues through the
// program's requests; nothing when the environment names none.
func InjectEnv(h http.Header) {
	tc := propagation.TraceContext{}
	tc.Inject(tc.Extract(context.Background(), &envcar.Carrier{}), propagation.HeaderCarrier(h))
}

// InTraces is tp making spans only within a trace: a statement a
// background job runs every second (the key plane's read of its newest
// change, say) would otherwise be a trace of its own each time. otelpgx
// has no option for it (otelsql has a filter); the wrapper is the few
// lines that tell both alike.
func InTraces(tp trace.TracerProvider) trace.TracerProvider { return inTraces{tp} }

type inTraces struct{ trace.TracerProvider }

func (p inTraces) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return childTracer{p.TracerProvider.Tracer(name, opts...)}
}

type childTracer struct{ trace.Tracer }

func (t childTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, trace.SpanFromContext(ctx) // records nothing
	}
	return t.Tracer.Start(ctx, name, opts...)
}

// traceparent is the W3C trace context's key, as propagation's carriers
// name it.
const traceparent = "traceparent"

// Logger is l, with LogFields(ctx) when ctx is in a trace.
func Logger(ctx context.Context, l *zap.Logger) *zap.Logger {
	if f := LogFields(ctx); f != nil {
		return l.With(f...)
	}
	return l
}

// LogFields are the log fields that lead a log line written inside a traced
// request to its trace: trace_id and span_id, none outside a trace.
func LogFields(ctx context.Context) []zap.Field {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	return []zap.Field{zap.String("trace_id", sc.TraceID().String()), zap.String("span_id", sc.SpanID().String())}
}
