package hdctracing

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// tracingTo returns a handler that traces with a provider of its own,
// whose sampler OTEL_TRACES_SAMPLER=sampler and OTEL_TRACES_SAMPLER_ARG=arg
// name (telemetry.Start's), and what the provider records.
func tracingTo(t *testing.T, sampler, arg string) (*Tracing, *tracetest.SpanRecorder) {
	t.Helper()
	s, err := telemetry.NewSampler(sampler, arg)
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(s), sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	return &Tracing{tracer: tp.Tracer("test"), prop: prop}, rec
}

func TestTracing(t *testing.T) {
	t.Parallel()
	tr, rec := tracingTo(t, "", "")
	const clientTrace = "0af7651916cd43dd8448eb211c80319c"
	r := httptest.NewRequest("POST", "/mr/api/v2/docs", nil)
	r.Header.Set("Traceparent", "00-"+clientTrace+"-b7ad6b7169203331-01")
	r.Header.Set("User-Agent", "a client's own words")
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	ctx := context.WithValue(r.Context(), caddyhttp.ExtraLogFieldsCtxKey, new(caddyhttp.ExtraLogFields))
	ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: "192.0.2.7"})
	var hop http.Header
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		hop = r.Header.Clone()
		w.WriteHeader(http.StatusBadGateway)
		return nil
	})
	if err := tr.ServeHTTP(httptest.NewRecorder(), r.WithContext(ctx), next); err != nil {
		t.Fatal(err)
	}
	ended := rec.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans", len(ended))
	}
	s := ended[0]
	if s.SpanContext().TraceID().String() != clientTrace || s.Parent().SpanID().String() != "b7ad6b7169203331" {
		t.Fatalf("span %v under %v, want the client's trace", s.SpanContext(), s.Parent())
	}
	if want := "00-" + clientTrace + "-" + s.SpanContext().SpanID().String() + "-01"; hop.Get("Traceparent") != want {
		t.Fatalf("the hop's traceparent %q, want %q", hop.Get("Traceparent"), want)
	}
	attrs := map[string]string{}
	for _, kv := range s.Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["client.address"] != "192.0.2.7" || attrs["http.response.status_code"] != "502" || attrs["http.request.method"] != "POST" {
		t.Fatalf("attributes %v", attrs)
	}
	if b, _ := json.Marshal(attrs); strings.Contains(string(b), "own words") || strings.Contains(string(b), "203.0.113.9") {
		t.Fatalf("the span holds a header the edge keeps to itself: %s", b)
	}
}

func TestTracingOff(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	tr := new(Tracing)
	if err := tr.Provision(caddy.Context{}); err != nil || tr.tracer != nil {
		t.Fatalf("Provision: %v, tracer %v", err, tr.tracer)
	}
	r := httptest.NewRequest("GET", "/", nil)
	called := false
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { called = true; return nil })
	if err := tr.ServeHTTP(httptest.NewRecorder(), r, next); err != nil || !called || r.Header.Get("Traceparent") != "" {
		t.Fatalf("ServeHTTP: %v, next called %v, headers %v", err, called, r.Header)
	}
}

// The trace contexts of the hop tests: W3C's example, and another.
const (
	hopTrace  = "0af7651916cd43dd8448eb211c80319c"
	hopSpan   = "b7ad6b7169203331"
	hopParent = "00-" + hopTrace + "-" + hopSpan + "-01"
	hopOther  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
)

// tracestateOf is a valid tracestate of n members, size bytes in all.
func tracestateOf(n, size int) string {
	members := make([]string, n)
	each := (size - (n - 1)) / n // a member's share, the commas apart
	for i := range members {
		key := fmt.Sprintf("k%03d=", i)
		members[i] = key + strings.Repeat("v", each-len(key))
	}
	members[n-1] += strings.Repeat("w", size-(n-1)-n*each)
	return strings.Join(members, ",")
}

// hopCases are a client's trace contexts (the security review of
// tracing's, finding 3, and their neighbours): the traceparent and
// tracestate fields it sends, whether the edge parses the traceparent
// (version 00, alone), and the tracestate that crosses the hop, "" for
// none.
var hopCases = []struct {
	name                    string
	traceparent, tracestate []string
	parsed                  bool
	crosses                 string
}{
	{"none", nil, nil, false, ""},
	{"W3C's example", []string{hopParent}, nil, true, ""},
	{"with a tracestate", []string{hopParent}, []string{"congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"}, true, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"},
	{"a tracestate in two fields", []string{hopParent}, []string{"congo=t61rcWkgMzE", "rojo=00f067aa0ba902b7"}, true, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"},
	{"a tracestate of 512 bytes", []string{hopParent}, []string{tracestateOf(4, 512)}, true, tracestateOf(4, 512)},
	{"a tracestate of 513 bytes", []string{hopParent}, []string{tracestateOf(4, 513)}, true, ""},
	{"a tracestate of 33 members, 8 KiB", []string{hopParent}, []string{tracestateOf(33, 8<<10)}, true, ""},
	{"a tracestate of 32 members, 8 KiB", []string{hopParent}, []string{tracestateOf(32, 8<<10)}, true, ""},
	{"a tracestate that does not parse", []string{hopParent}, []string{"not a member"}, true, ""},
	{"an orphan tracestate", nil, []string{"congo=t61rcWkgMzE"}, false, ""},
	{"a traceparent of 8 KiB", []string{hopParent + strings.Repeat("0", 8<<10)}, []string{"congo=t61rcWkgMzE"}, false, ""},
	{"version ff", []string{"ff" + hopParent[2:]}, nil, false, ""},
	{"version 01", []string{"01" + hopParent[2:] + "-more"}, nil, false, ""},
	{"two traceparents", []string{hopParent, hopOther}, nil, false, ""},
	{"a bearer token", []string{"Bearer eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"}, nil, false, ""},
	{"upper-case hex", []string{strings.ToUpper(hopParent)}, nil, false, ""},
	{"a zero trace id", []string{"00-00000000000000000000000000000000-" + hopSpan + "-01"}, nil, false, ""},
}

// hopOf serves r with h and returns the W3C trace context fields the
// next handler got, what would cross the hop.
func hopOf(t *testing.T, h caddyhttp.MiddlewareHandler, r *http.Request) (traceparent, tracestate []string) {
	t.Helper()
	next := caddyhttp.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) error {
		traceparent, tracestate = r.Header.Values("Traceparent"), r.Header.Values("Tracestate")
		return nil
	})
	if err := h.ServeHTTP(httptest.NewRecorder(), r, next); err != nil {
		t.Fatal(err)
	}
	return traceparent, tracestate
}

// hopRequest is a request with the trace context fields given, and
// baggage, from a trusted proxy or not, as Caddy's server prepares it.
func hopRequest(traceparent, tracestate []string, fromProxy bool) *http.Request {
	r := httptest.NewRequest("POST", "/connect-auth/v1/account/login", nil)
	r.Header["Traceparent"], r.Header["Tracestate"] = traceparent, tracestate
	r.Header.Set("Baggage", "user=someone")
	ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{caddyhttp.TrustedProxyVarKey: fromProxy})
	return r.WithContext(ctx)
}

// TestTracingOffHop (security review of tracing, finding 3): with tracing
// off, only a trace context the edge parses crosses the hop: one
// traceparent of version 00, its sampled flag cleared (a client does not
// decide the backend's sampling), and its tracestate when that parses
// within 512 bytes. Baggage is left to hdc_forward, which drops it.
func TestTracingOffHop(t *testing.T) {
	t.Parallel()
	for _, tt := range hopCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tp, ts := hopOf(t, new(Tracing), hopRequest(tt.traceparent, tt.tracestate, false))
			var want []string
			if tt.parsed {
				want = []string{tt.traceparent[0][:53] + "00"}
			}
			if !slices.Equal(tp, want) {
				t.Errorf("traceparent %q, want %q", tp, want)
			}
			if got := strings.Join(ts, ","); got != tt.crosses || len(ts) > 1 {
				t.Errorf("tracestate %q, want %q", ts, tt.crosses)
			}
		})
	}
}

// TestTracingOnHop (security review of tracing, finding 3): with tracing
// on, the hop carries the edge's own span context, in the client's trace
// when the edge parses the client's traceparent, and the client's
// tracestate only when the edge accepts it (as with tracing off).
func TestTracingOnHop(t *testing.T) {
	t.Parallel()
	for _, tt := range hopCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, rec := tracingTo(t, "", "")
			parent, state := hopOf(t, tr, hopRequest(tt.traceparent, tt.tracestate, false))
			ended := rec.Ended()
			if len(ended) != 1 {
				t.Fatalf("%d spans", len(ended))
			}
			sc := ended[0].SpanContext()
			if want := []string{"00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"}; !slices.Equal(parent, want) {
				t.Errorf("traceparent %q, want the edge's span's, %q", parent, want)
			}
			if inClients := sc.TraceID().String() == hopTrace; inClients != tt.parsed {
				t.Errorf("the edge's span is in trace %s, parsed %v", sc.TraceID(), tt.parsed)
			}
			if got := strings.Join(state, ","); got != tt.crosses || len(state) > 1 {
				t.Errorf("tracestate %q, want %q", state, tt.crosses)
			}
		})
	}
}

// FuzzTracingOffHop holds what crosses the hop with tracing off, whatever
// the client sends: at most one traceparent, of version 00 as
// OpenTelemetry parses it, its sampled flag cleared; a tracestate only
// beside it, alone, parsed and of at most 512 bytes.
func FuzzTracingOffHop(f *testing.F) {
	for _, tt := range hopCases {
		var tp, ts string
		if len(tt.traceparent) > 0 {
			tp = tt.traceparent[0]
		}
		if len(tt.tracestate) > 0 {
			ts = tt.tracestate[0]
		}
		f.Add(tp, "", ts, "")
	}
	f.Add(hopParent, hopOther, "a=b", "c=d")
	f.Fuzz(func(t *testing.T, tp1, tp2, ts1, ts2 string) {
		var sent [2][]string
		for i, v := range []string{tp1, tp2, ts1, ts2} {
			if v != "" {
				sent[i/2] = append(sent[i/2], v)
			}
		}
		tp, ts := hopOf(t, new(Tracing), hopRequest(sent[0], sent[1], false))
		if len(tp) > 1 || len(ts) > 1 || len(tp) == 0 && len(ts) > 0 {
			t.Fatalf("traceparent %q, tracestate %q", tp, ts)
		}
		if len(tp) == 0 {
			return
		}
		sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
			propagation.MapCarrier{"traceparent": tp[0]}))
		if !sc.IsValid() || !strings.HasPrefix(tp[0], "00-") || len(tp[0]) != 55 || sc.IsSampled() {
			t.Fatalf("traceparent %q", tp[0])
		}
		if len(ts) == 1 {
			if _, err := trace.ParseTraceState(ts[0]); err != nil || len(ts[0]) > 512 {
				t.Fatalf("tracestate %q (%d bytes): %v", ts[0], len(ts[0]), err)
			}
		}
	})
}

// TestTracingTrustParent (security review of tracing, finding 4): at a
// sampling ratio of 0, a request whose traceparent has the sampled flag
// set is sampled only when trust_parent trusts it: all, or trusted_proxies
// from a trusted proxy. With tracing off, the flag crosses the hop only
// then.
func TestTracingTrustParent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		trust     string
		fromProxy bool
		trusted   bool
	}{
		{"", true, false},
		{trustNone, true, false},
		{trustProxies, false, false},
		{trustProxies, true, true},
		{trustAll, false, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q, from a trusted proxy %v", tt.trust, tt.fromProxy), func(t *testing.T) {
			t.Parallel()
			flag := map[bool]string{false: "00", true: "01"}[tt.trusted]
			off := &Tracing{TrustParent: tt.trust}
			if tp, _ := hopOf(t, off, hopRequest([]string{hopParent}, nil, tt.fromProxy)); !slices.Equal(tp, []string{hopParent[:53] + flag}) {
				t.Errorf("tracing off: the hop's traceparent %q, want flags %s", tp, flag)
			}
			on, rec := tracingTo(t, "parentbased_traceidratio", "0")
			on.TrustParent = tt.trust
			tp, _ := hopOf(t, on, hopRequest([]string{hopParent}, nil, tt.fromProxy))
			if len(tp) != 1 || !strings.HasPrefix(tp[0], "00-"+hopTrace) || !strings.HasSuffix(tp[0], "-"+flag) ||
				(len(rec.Ended()) == 1) != tt.trusted {
				t.Errorf("tracing on: the hop's traceparent %q and %d spans, want the client's trace, flags %s", tp, len(rec.Ended()), flag)
			}
		})
	}
}

// TestTracingOffCostsNothing: with tracing off, a request without a trace
// context is passed on without an allocation (docs/performance.md counts
// the edge's instructions a request).
func TestTracingOffCostsNothing(t *testing.T) {
	tr := &Tracing{TrustParent: trustProxies}
	r, w := hopRequest(nil, nil, true), httptest.NewRecorder()
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
	if n := testing.AllocsPerRun(100, func() { _ = tr.ServeHTTP(w, r, next) }); n != 0 {
		t.Fatalf("%v allocations a request", n)
	}
}
