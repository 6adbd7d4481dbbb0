// Package hdctracing is the hdc_tracing handler: a span of each request,
// and the trace context the hop carries, at the edge's trust boundary
// (tracing.go); StartTracing configures a program's tracing from the
// OTEL_* environment; its Caddyfile directive is in caddyfile.go.
package hdctracing

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

func init() {
	caddy.RegisterModule(Tracing{})
}

// Tracing is the hdc_tracing handler: a server span of each request, under
// the W3C trace context the client sent, and that span's context sent on
// to the backend (the hop's traceparent), with OpenTelemetry's global
// provider, which the program configures from the OTEL_* environment
// (telemetry.Start). Without an exporter (telemetry.Enabled) it makes no
// span and costs nothing on a request without a trace context.
//
// The edge is a trust boundary. Whether tracing is on or off, the
// client's traceparent and tracestate fields leave the request first and
// only what the edge parses of them comes back (hopTraceContext): one
// traceparent of W3C's version 00, and its tracestate when that parses
// within maxTracestate bytes. With tracing on, the hop then carries the
// edge's own span context instead. The client's sampled flag decides
// nothing unless TrustParent trusts the request: with tracing on, the
// edge's sampler decides as for a trace's first span
// (telemetry.DistrustParent), still in the client's trace; with tracing
// off, the flag is cleared before the hop, so that the backend, which
// follows the edge's flag, does not sample the request because a client
// asked.
//
// It does what Caddy's tracing handler does, but for what the span
// records: Caddy's, through otelhttp, records the User-Agent and the
// X-Forwarded-For a client sends, headers the edge keeps out of its logs
// and off the hop. This span has the method, the route (hdc_auth names
// it), the client's address as the access log has it (Caddy's client_ip,
// behind trusted proxies only) and the status. The access log line of a
// traced request carries trace_id and span_id.
//
//	hdc_tracing {
//		trust_parent none|trusted_proxies|all
//	}
type Tracing struct {
	// TrustParent names the requests whose trace context's sampled flag
	// the edge follows: none (the default), those from a proxy of the
	// server's trusted_proxies (trusted_proxies), or all.
	TrustParent string `json:"trust_parent,omitempty"`

	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// The values of Tracing.TrustParent.
const (
	trustNone    = "none"
	trustProxies = "trusted_proxies"
	trustAll     = "all"
)

// checkTrustParent refuses a TrustParent that names none of its values
// ("" is none).
func checkTrustParent(v string) error {
	switch v {
	case "", trustNone, trustProxies, trustAll:
		return nil
	}
	return fmt.Errorf("trust_parent %q: none, trusted_proxies or all", v)
}

// maxTracestate bounds a client's tracestate, in bytes as sent (its
// fields joined by commas): W3C Trace Context asks every participant to
// pass on at least 512 characters of it, so a tracestate any vendor is
// bound to carry fits. A longer one is dropped whole rather than cut, so
// that a client cannot make the hop and every span of the trace carry
// kilobytes of its choosing.
const maxTracestate = 512

// CaddyModule returns the Caddy module information.
func (Tracing) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.hdc_tracing",
		New: func() caddy.Module { return new(Tracing) },
	}
}

// Provision checks TrustParent, and takes the global tracer provider and
// propagator when tracing is on.
func (t *Tracing) Provision(caddy.Context) error {
	if err := checkTrustParent(t.TrustParent); err != nil {
		return err
	}
	if telemetry.Enabled() {
		t.tracer, t.prop = otel.Tracer(edge.TracerName), otel.GetTextMapPropagator()
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (t *Tracing) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	trusted := t.trusts(r)
	hopTraceContext(r.Header, trusted)
	if t.tracer == nil {
		return next.ServeHTTP(w, r)
	}
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	if !trusted && trace.SpanContextFromContext(ctx).IsRemote() {
		ctx = telemetry.DistrustParent(ctx)
	}
	client, _ := caddyhttp.GetVar(ctx, caddyhttp.ClientIPVarKey).(string)
	ctx, span := t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		semconv.HTTPRequestMethodKey.String(r.Method), semconv.ClientAddress(client)))
	defer span.End()
	r = r.WithContext(ctx)
	setTraceContext(r.Header, ctx) // the hop's: the backend's span is this one's child
	if extra, ok := ctx.Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); ok {
		sc := span.SpanContext()
		extra.Add(zap.String("trace_id", sc.TraceID().String()))
		extra.Add(zap.String("span_id", sc.SpanID().String()))
	}
	code, err := edge.ServeStatus(w, func(w http.ResponseWriter) error { return next.ServeHTTP(w, r) })
	span.SetAttributes(semconv.HTTPResponseStatusCode(code))
	if code >= 500 {
		span.SetStatus(codes.Error, http.StatusText(code))
	}
	return err
}

// trusts reports whether TrustParent trusts r's trace context.
func (t *Tracing) trusts(r *http.Request) bool {
	switch t.TrustParent {
	case trustAll:
		return true
	case trustProxies:
		trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool)
		return trusted
	}
	return false
}

// hopTraceContext replaces the W3C trace context fields of h, a client's
// request's, with what the edge parses of them (parseTraceContext), its
// trace flags (the sampled flag) cleared unless the client is trusted. A
// request without either field is left as it is, at no cost.
func hopTraceContext(h http.Header, trusted bool) {
	if h[contract.HeaderTraceparent] == nil && h[contract.HeaderTracestate] == nil {
		return
	}
	sc := parseTraceContext(h[contract.HeaderTraceparent], h[contract.HeaderTracestate])
	if !trusted {
		sc = sc.WithTraceFlags(0)
	}
	setTraceContext(h, trace.ContextWithRemoteSpanContext(context.Background(), sc))
}

// parseTraceContext is the span context of a request's traceparent and
// tracestate fields: that of exactly one traceparent of version 00 (the
// one version W3C has defined; OpenTelemetry also reads later ones, and
// the first of several fields), as OpenTelemetry parses it, with the
// tracestate fields, joined, when they parse and hold at most
// maxTracestate bytes. It is the empty span context for any other.
func parseTraceContext(traceparent, tracestate []string) trace.SpanContext {
	if len(traceparent) != 1 || !strings.HasPrefix(traceparent[0], "00-") {
		return trace.SpanContext{}
	}
	c := propagation.MapCarrier{"traceparent": traceparent[0]}
	if n := len(tracestate) - 1; n >= 0 {
		for _, v := range tracestate {
			n += len(v)
		}
		if n <= maxTracestate {
			c["tracestate"] = strings.Join(tracestate, ",")
		}
	}
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), c))
}

// setTraceContext puts ctx's span context in h as W3C's traceparent and
// tracestate, in place of any h held, or none when ctx is in no trace:
// the only trace context the hop's allow-list lets through
// (contract.Forwards), whatever propagators OTEL_PROPAGATORS names.
func setTraceContext(h http.Header, ctx context.Context) {
	delete(h, contract.HeaderTraceparent)
	delete(h, contract.HeaderTracestate)
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
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
