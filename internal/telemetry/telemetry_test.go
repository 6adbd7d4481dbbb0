package telemetry

import (
	"context"
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
)

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestEnabled(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, false},
		{"an OTLP endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{"a traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{"the console", map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{"exporter none, an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{"the SDK disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"}, false},
		{"only a sampler", map[string]string{"OTEL_TRACES_SAMPLER": "always_on"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_SAMPLER"} {
				t.Setenv(k, tt.env[k])
			}
			if got := Enabled(); got != tt.want {
				t.Fatalf("Enabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

// recorded returns a context in a recording span of a provider, and what
// the provider records.
func recorded(t *testing.T) (context.Context, *sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(context.Background(), "request")
	t.Cleanup(func() { span.End() })
	return ctx, tp, rec
}

func TestTraceParentAndLink(t *testing.T) {
	ctx, _, _ := recorded(t)
	sc := trace.SpanContextFromContext(ctx)
	tp := TraceParent(ctx)
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	if tp != want {
		t.Fatalf("TraceParent = %q, want %q", tp, want)
	}
	links := LinkTo(tp)
	if len(links) != 1 || links[0].SpanContext.TraceID() != sc.TraceID() || links[0].SpanContext.SpanID() != sc.SpanID() {
		t.Fatalf("LinkTo(%q) = %+v", tp, links)
	}
	for _, bad := range []string{"", "00-xyz", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"} {
		if l := LinkTo(bad); l != nil {
			t.Errorf("LinkTo(%q) = %+v, want none", bad, l)
		}
	}
	if tp := TraceParent(context.Background()); tp != "" {
		t.Errorf("TraceParent outside a trace = %q", tp)
	}
}

func TestInjectEnv(t *testing.T) {
	t.Run("a trace context", func(t *testing.T) {
		t.Setenv("TRACEPARENT", parent)
		t.Setenv("TRACESTATE", "vendor=x")
		h := http.Header{}
		InjectEnv(h)
		if h.Get("Traceparent") != parent || h.Get("Tracestate") != "vendor=x" {
			t.Fatalf("headers %v", h)
		}
	})
	t.Run("none, or one that is not", func(t *testing.T) {
		for _, v := range []string{"", "not-a-traceparent"} {
			t.Setenv("TRACEPARENT", v)
			h := http.Header{}
			InjectEnv(h)
			if len(h) != 0 {
				t.Fatalf("TRACEPARENT=%q: headers %v", v, h)
			}
		}
	})
}

func TestInTraces(t *testing.T) {
	ctx, tp, rec := recorded(t)
	tracer := InTraces(tp).Tracer("test")
	_, root := tracer.Start(context.Background(), "a job's statement")
	root.End()
	_, child := tracer.Start(ctx, "a request's statement")
	child.End()
	ended := rec.Ended()
	if len(ended) != 1 || ended[0].Name() != "a request's statement" ||
		ended[0].Parent().SpanID() != trace.SpanContextFromContext(ctx).SpanID() {
		t.Fatalf("ended spans: %v", ended)
	}
	if root.IsRecording() || root.SpanContext().IsValid() {
		t.Fatal("a span outside a trace was made")
	}
}

func TestLogFields(t *testing.T) {
	if f := LogFields(context.Background()); f != nil {
		t.Fatalf("outside a trace: %v", f)
	}
	ctx, _, _ := recorded(t)
	sc := trace.SpanContextFromContext(ctx)
	f := LogFields(ctx)
	if len(f) != 2 || f[0] != zap.String("trace_id", sc.TraceID().String()) || f[1] != zap.String("span_id", sc.SpanID().String()) {
		t.Fatalf("LogFields = %v", f)
	}
}

func TestNewSampler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, arg string
		want      sdktrace.Sampler // as the SDK reads the same variables
	}{
		{"", "", sdktrace.ParentBased(sdktrace.AlwaysSample())},
		{"always_on", "", sdktrace.AlwaysSample()},
		{"always_off", "", sdktrace.NeverSample()},
		{"traceidratio", "", sdktrace.TraceIDRatioBased(1)},
		{"traceidratio", "0.25", sdktrace.TraceIDRatioBased(0.25)},
		{"parentbased_always_on", "", sdktrace.ParentBased(sdktrace.AlwaysSample())},
		{"parentbased_always_off", "", sdktrace.ParentBased(sdktrace.NeverSample())},
		{"parentbased_traceidratio", "", sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1))},
		{" ParentBased_TraceIDRatio ", " 0 ", sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0))},
	}
	for _, tt := range tests {
		t.Run(tt.name+" "+tt.arg, func(t *testing.T) {
			t.Parallel()
			s, err := NewSampler(tt.name, tt.arg)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(s.Description(), "{"+tt.want.Description()+",") {
				t.Fatalf("%s, want %s under the boundary", s.Description(), tt.want.Description())
			}
		})
	}
	for _, bad := range [][2]string{{"parentbased_jaeger_remote", ""}, {"always", ""}, {"parentbased_parentbased_always_on", ""},
		{"traceidratio", "a tenth"}, {"traceidratio", "-0.1"}, {"parentbased_traceidratio", "1.5"}, {"traceidratio", "NaN"}} {
		if s, err := NewSampler(bad[0], bad[1]); err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_SAMPLER") {
			t.Errorf("NewSampler(%q, %q) = %v, %v; want an error naming the variable", bad[0], bad[1], s, err)
		}
	}
}

// TestStartRefusesAnUnknownSampler: a program whose OTEL_TRACES_SAMPLER
// the SDK would log and then sample everything under does not start.
func TestStartRefusesAnUnknownSampler(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
	t.Setenv("OTEL_TRACES_SAMPLER_ARG", "10%")
	if stop, err := Start(context.Background(), "test"); err == nil || !strings.Contains(err.Error(), `OTEL_TRACES_SAMPLER_ARG "10%"`) {
		if err == nil {
			_ = stop()
		}
		t.Fatalf("Start: %v", err)
	}
}

// remoteParent is a context under a remote parent of trace id and flags
// (the client's, as the edge's propagator extracts it), distrusted or not.
func remoteParent(id trace.TraceID, flags trace.TraceFlags, distrusted bool) context.Context {
	ts, _ := trace.ParseTraceState("congo=t61rcWkgMzE")
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: id, SpanID: trace.SpanID{1}, TraceFlags: flags, TraceState: ts, Remote: true}))
	if distrusted {
		ctx = DistrustParent(ctx)
	}
	return ctx
}

// sampledOf starts n spans under the contexts ctx(i) with the sampler that
// name and arg configure, and returns how many were sampled; each span is
// checked to keep its parent's trace id and tracestate.
func sampledOf(t *testing.T, name, arg string, n int, ctx func(i int) context.Context) int {
	t.Helper()
	s, err := NewSampler(name, arg)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(s))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	sampled := 0
	for i := range n {
		parent := ctx(i)
		_, span := tp.Tracer("test").Start(parent, "request")
		sc, psc := span.SpanContext(), trace.SpanContextFromContext(parent)
		if psc.IsValid() && (sc.TraceID() != psc.TraceID() || sc.TraceState().String() != psc.TraceState().String()) {
			t.Fatalf("span %s (%s) under %s (%s): the parent's trace id and tracestate are not kept",
				sc.TraceID(), sc.TraceState(), psc.TraceID(), psc.TraceState())
		}
		if sc.IsSampled() {
			sampled++
		}
		span.End()
	}
	return sampled
}

// chosenID is a trace id a client may pick so that a sampler deciding on
// it samples it at any ratio: TraceIDRatioBased samples an id whose last
// 8 bytes, read as a number, are below the ratio's share of them.
func chosenID(i int) trace.TraceID {
	return trace.TraceID{0: 1, 1: byte(i >> 8), 2: byte(i)}
}

// TestSamplerAtTheBoundary (security review of tracing, finding 4): a
// remote parent the edge distrusts (a client's) does not decide sampling,
// neither by its sampled flag nor by the trace id it chose; the sampler
// decides as for a trace's first span, on a trace id of its own, and the
// span keeps the client's trace id. A parent not marked (the edge's, at
// the backend) is followed as the SDK follows it.
func TestSamplerAtTheBoundary(t *testing.T) {
	t.Parallel()
	someID := trace.TraceID{0: 0x4b, 8: 0xff, 15: 0xff} // one TraceIDRatioBased samples only at a ratio of 1
	tests := []struct {
		name, sampler, arg string
		ctx                func(i int) context.Context
		min, max           int // of 2000 spans
	}{
		{"a distrusted parent, sampled, at ratio 0", "parentbased_traceidratio", "0",
			func(i int) context.Context { return remoteParent(chosenID(i), trace.FlagsSampled, true) }, 0, 0},
		{"a distrusted parent, chosen ids, at ratio 0.01", "parentbased_traceidratio", "0.01",
			func(i int) context.Context { return remoteParent(chosenID(i), trace.FlagsSampled, true) }, 1, 80},
		{"a distrusted parent, chosen ids, traceidratio 0.01", "traceidratio", "0.01",
			func(i int) context.Context { return remoteParent(chosenID(i), 0, true) }, 1, 80},
		{"a distrusted parent, not sampled, always on", "parentbased_always_on", "",
			func(int) context.Context { return remoteParent(someID, 0, true) }, 2000, 2000},
		{"a distrusted parent, always off", "parentbased_always_off", "",
			func(int) context.Context { return remoteParent(someID, trace.FlagsSampled, true) }, 0, 0},
		{"a trusted parent, sampled, at ratio 0", "parentbased_traceidratio", "0",
			func(int) context.Context { return remoteParent(someID, trace.FlagsSampled, false) }, 2000, 2000},
		{"a trusted parent, not sampled, always on", "parentbased_always_on", "",
			func(int) context.Context { return remoteParent(someID, 0, false) }, 0, 0},
		{"no parent, at ratio 0", "parentbased_traceidratio", "0",
			func(int) context.Context { return context.Background() }, 0, 0},
		{"no parent, always on", "parentbased_always_on", "",
			func(int) context.Context { return DistrustParent(context.Background()) }, 2000, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := sampledOf(t, tt.sampler, tt.arg, 2000, tt.ctx); got < tt.min || got > tt.max {
				t.Fatalf("%d of 2000 spans sampled, want %d to %d", got, tt.min, tt.max)
			}
		})
	}
}

// TestSamplerFollowsLocalParents: the spans of the edge under its request
// span are sampled as it is, though the request's context is marked.
func TestSamplerFollowsLocalParents(t *testing.T) {
	t.Parallel()
	s, err := NewSampler("parentbased_traceidratio", "0")
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(s))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx := DistrustParent(trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled})))
	if _, span := tp.Tracer("test").Start(ctx, "step"); !span.SpanContext().IsSampled() {
		t.Fatal("a step of a sampled request is not sampled")
	}
}
