package hdcjwe

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
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
	k := edgetest.Key(t, edgetest.SecretOf("k-c1"))
	const plaintext = `{"note":"a consultation's words"}`
	tests := []struct {
		name string
		body []byte
		want map[string]map[string]string
	}{
		{"opened and encrypted", jwe.EncryptRequest(k, jwe.Protected{Kid: "k-c1"}, []byte(plaintext)), map[string]map[string]string{
			"hdc_jwe key":     {"hdc.kid": "k-c1", "hdc.key.cached": "true", "hdc.outcome": "ok", "hdc.enc": jwe.EncA128CBCHS256},
			"hdc_jwe decrypt": {"hdc.kid": "k-c1", "hdc.enc": jwe.EncA128CBCHS256, "hdc.outcome": "ok", "hdc.bytes.out": "33"},
			"hdc_jwe encrypt": {"hdc.kid": "k-c1", "hdc.enc": jwe.EncA128CBCHS256, "hdc.outcome": "ok", "hdc.bytes.in": "2"},
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
			for _, secret := range []string{edgetest.SecretOf("k-c1"), "a consultation", string(tt.body[:20])} {
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
	k := edgetest.Key(t, edgetest.SecretOf("k-c1"))
	up := &upstream{reply: []byte(`{}`)}
	w := serve(t, newTestJWE(t, false), encryptedRequest("POST", "/x", jwe.EncryptRequest(k, jwe.Protected{Kid: "k-c1"}, []byte(`{}`)),
		"application/json"), "c1", up)
	if w.Code != http.StatusOK || !up.called {
		t.Fatalf("%d: %s", w.Code, w.Body)
	}
}
