package caddymodule

import (
	"context"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/telemetry"
)

func init() {
	caddy.RegisterModule(Tracing{})
}

// Tracing is the hdc_tracing handler: a server span of each request, under
// the W3C trace context the client sent, and that span's context sent on
// to the backend (the hop's traceparent), with OpenTelemetry's global
// provider, which the program configures from the OTEL_* environment
// (telemetry.Start). Without an exporter (telemetry.Enabled) it passes the
// request on and costs nothing.
//
// It does what Caddy's tracing handler does, but for what the span
// records: Caddy's, through otelhttp, records the User-Agent and the
// X-Forwarded-For a client sends, headers the edge keeps out of its logs
// and off the hop. This span has the method, the route (hdc_auth names
// it), the client's address as the access log has it (Caddy's client_ip,
// behind trusted proxies only) and the status. The access log line of a
// traced request carries trace_id and span_id.
//
//	hdc_tracing
type Tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// CaddyModule returns the Caddy module information.
func (Tracing) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.hdc_tracing",
		New: func() caddy.Module { return new(Tracing) },
	}
}

// Provision takes the global tracer provider and propagator when tracing
// is on.
func (t *Tracing) Provision(caddy.Context) error {
	if telemetry.Enabled() {
		t.tracer, t.prop = otel.Tracer(tracerName), otel.GetTextMapPropagator()
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (t *Tracing) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if t.tracer == nil {
		return next.ServeHTTP(w, r)
	}
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	client, _ := caddyhttp.GetVar(ctx, caddyhttp.ClientIPVarKey).(string)
	ctx, span := t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		semconv.HTTPRequestMethodKey.String(r.Method), semconv.ClientAddress(client)))
	defer span.End()
	r = r.WithContext(ctx)
	t.prop.Inject(ctx, propagation.HeaderCarrier(r.Header)) // the hop's: the backend's span is this one's child
	if extra, ok := ctx.Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); ok {
		sc := span.SpanContext()
		extra.Add(zap.String("trace_id", sc.TraceID().String()))
		extra.Add(zap.String("span_id", sc.SpanID().String()))
	}
	code, err := serveStatus(w, func(w http.ResponseWriter) error { return next.ServeHTTP(w, r) })
	span.SetAttributes(semconv.HTTPResponseStatusCode(code))
	if code >= 500 {
		span.SetStatus(codes.Error, http.StatusText(code))
	}
	return err
}

// StartTracing configures the process's tracing from the OTEL_*
// environment (telemetry.Start), for an edge named service unless
// OTEL_SERVICE_NAME names it otherwise, and exports the last spans when
// Caddy exits. A program that runs Caddy calls it before Caddy starts.
func StartTracing(service string) error {
	stop, err := telemetry.Start(context.Background(), service)
	if err != nil {
		return fmt.Errorf("tracing (OTEL_*): %w", err)
	}
	caddy.OnExit(func(context.Context) { _ = stop() })
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Tracing)(nil)
	_ caddyhttp.MiddlewareHandler = (*Tracing)(nil)
	_ caddyfile.Unmarshaler       = (*Tracing)(nil)
)
