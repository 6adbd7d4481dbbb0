package telemetry

import (
	"context"
	"net/http"
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
