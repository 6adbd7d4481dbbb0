package edge

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/health-data-connect/hdc/internal/problem"
)

// TracerName names the edge modules' spans' instrumentation scope.
const TracerName = "github.com/health-data-connect/hdc/caddymodule"

// The attributes of the edge's spans. None holds a body, a token, a key, a
// secret or a query value: a kid only when the edge holds it (hdc_jwe's
// kidLabel).
const (
	AttrOutcome     = attribute.Key("hdc.outcome")      // ok, or the problem code
	AttrKid         = attribute.Key("hdc.kid")          // the key's id, or "unknown"
	AttrEnc         = attribute.Key("hdc.enc")          // A128CBC-HS256 or A256GCM
	AttrCached      = attribute.Key("hdc.key.cached")   // the edge held the key before the look-up
	AttrMode        = attribute.Key("hdc.auth.mode")    // token, refresh or public
	AttrInBytes     = attribute.Key("hdc.bytes.in")     // what the step read
	AttrOutBytes    = attribute.Key("hdc.bytes.out")    // what the step wrote
	attrProblemCode = attribute.Key("hdc.problem.code") // the refusal's code
)

// noSpan records nothing.
var noSpan = trace.SpanFromContext(context.Background())

// StartSpan starts a span named name under the request's span, when that
// one records: hdc_tracing's trace, sampled. Otherwise it returns ctx and a
// span that records nothing, for the price of a look-up in ctx.
func StartSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, noSpan
	}
	return parent.TracerProvider().Tracer(TracerName).Start(ctx, name)
}

// EndSpan ends span with its outcome, ok or p's code (an error), and attrs.
func EndSpan(span trace.Span, p *problem.Problem, attrs ...attribute.KeyValue) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attrs...)
	if p != nil {
		span.SetAttributes(AttrOutcome.String(p.Code), attrProblemCode.String(p.Code))
		span.SetStatus(codes.Error, p.Code)
	} else {
		span.SetAttributes(AttrOutcome.String("ok"))
	}
	span.End()
}
