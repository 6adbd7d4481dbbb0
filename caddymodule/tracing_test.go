package caddymodule

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// traced returns r in a recording span of a provider of its own, as
// hdc_tracing's would be, and what the provider records.
func traced(t *testing.T, r *http.Request) (*http.Request, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(r.Context(), "request")
	t.Cleanup(func() { span.End() })
	return r.WithContext(ctx), rec
}

// spanAttrs are the ended spans' attributes, by span name, as text.
func spanAttrs(rec *tracetest.SpanRecorder) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, s := range rec.Ended() {
		m := map[string]string{}
		for _, kv := range s.Attributes() {
			m[string(kv.Key)] = kv.Value.Emit()
		}
		out[s.Name()] = m
	}
	return out
}

func TestJWESpans(t *testing.T) {
	t.Parallel()
	k := mustKey(t, secretOf("k-c1"))
	const plaintext = `{"note":"a consultation's words"}`
	tests := []struct {
		name string
		body []byte
		want map[string]map[string]string
	}{
		{"opened and sealed", jwe.EncryptRequest(k, jwe.Protected{Kid: "k-c1"}, []byte(plaintext)), map[string]map[string]string{
			"hdc_jwe key":     {"hdc.kid": "k-c1", "hdc.key.cached": "true", "hdc.outcome": "ok", "hdc.enc": jwe.EncA128CBCHS256},
			"hdc_jwe decrypt": {"hdc.kid": "k-c1", "hdc.enc": jwe.EncA128CBCHS256, "hdc.outcome": "ok", "hdc.bytes.out": "33"},
			"hdc_jwe seal":    {"hdc.kid": "k-c1", "hdc.enc": jwe.EncA128CBCHS256, "hdc.outcome": "ok", "hdc.bytes.in": "2"},
		}},
		{"an unknown kid", jwe.EncryptRequest(k, jwe.Protected{Kid: "k-nobody"}, []byte(plaintext)), map[string]map[string]string{
			"hdc_jwe key":     {"hdc.kid": "unknown", "hdc.key.cached": "false", "hdc.outcome": "unknown"},
			"hdc_jwe decrypt": {"hdc.kid": "unknown", "hdc.outcome": "invalid_encryption", "hdc.problem.code": "invalid_encryption"},
		}},
	}
	h := newTestJWE(t, false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, rec := traced(t, encryptedRequest("POST", "/x", tt.body, "application/json"))
			serve(t, h, r, "c1", &upstream{reply: []byte(`{}`)})
			got := spanAttrs(rec)
			if len(got) != len(tt.want) {
				t.Fatalf("spans %v, want %d", got, len(tt.want))
			}
			for name, attrs := range tt.want {
				for k, v := range attrs {
					if got[name][k] != v {
						t.Errorf("%s: %s = %q, want %q (all: %v)", name, k, got[name][k], v, got[name])
					}
				}
			}
			b, _ := json.Marshal(got)
			for _, secret := range []string{secretOf("k-c1"), "a consultation", string(tt.body[:20])} {
				if strings.Contains(string(b), secret) {
					t.Fatalf("a span holds %q: %s", secret, b)
				}
			}
		})
	}
}

func TestJWESpansOff(t *testing.T) {
	t.Parallel()
	// No trace in the request: the handler makes no span and works as ever.
	k := mustKey(t, secretOf("k-c1"))
	up := &upstream{reply: []byte(`{}`)}
	w := serve(t, newTestJWE(t, false), encryptedRequest("POST", "/x", jwe.EncryptRequest(k, jwe.Protected{Kid: "k-c1"}, []byte(`{}`)),
		"application/json"), "c1", up)
	if w.Code != http.StatusOK || !up.called {
		t.Fatalf("%d: %s", w.Code, w.Body)
	}
}

func TestTracing(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := &Tracing{tracer: tp.Tracer("test"), prop: propagation.TraceContext{}}
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
