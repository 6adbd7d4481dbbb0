package hdctest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Collector is an OTLP/HTTP trace receiver on loopback: what the
// programs it is named to (Env) export, decoded with OpenTelemetry's own
// protobuf definitions.
type Collector struct {
	t   *testing.T
	srv *httptest.Server

	mu    sync.Mutex
	spans []Span
	raw   strings.Builder // every request, as JSON, for Scan
}

// Span is an exported span, with what a test asks of it.
type Span struct {
	Service, Name   string
	TraceID, SpanID string // hex
	ParentID        string // hex, "" for a root
	Attributes      map[string]string
	LinkedTraces    []string // hex trace ids of its links
	Error           bool
}

// StartCollector starts a collector that lives as long as the test.
func StartCollector(t *testing.T) *Collector {
	t.Helper()
	c := &Collector{t: t}
	c.srv = httptest.NewServer(http.HandlerFunc(c.receive))
	t.Cleanup(c.srv.Close)
	return c
}

// Env is the environment that points a program's traces at c, every
// span sampled and exported within a tenth of a second of its end.
func (c *Collector) Env() []string {
	return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + c.srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_TRACES_SAMPLER=parentbased_always_on", "OTEL_BSP_SCHEDULE_DELAY=100"}
}

func (c *Collector) receive(w http.ResponseWriter, r *http.Request) {
	body := io.Reader(r.Body)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	req := new(coltracepb.ExportTraceServiceRequest)
	if err == nil {
		err = proto.Unmarshal(b, req)
	}
	if r.URL.Path != "/v1/traces" || err != nil {
		c.t.Errorf("collector: %s %s: %v", r.Method, r.URL.Path, err)
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	c.add(req)
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// add keeps the spans of req.
func (c *Collector) add(req *coltracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw.WriteString(protojson.Format(req))
	for _, rs := range req.ResourceSpans {
		service := attributes(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				s := Span{Service: service, Name: sp.Name, TraceID: hex.EncodeToString(sp.TraceId),
					SpanID: hex.EncodeToString(sp.SpanId), ParentID: hex.EncodeToString(sp.ParentSpanId),
					Attributes: attributes(sp.Attributes), Error: sp.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR}
				for _, l := range sp.Links {
					s.LinkedTraces = append(s.LinkedTraces, hex.EncodeToString(l.TraceId))
				}
				c.spans = append(c.spans, s)
			}
		}
	}
}

// attributes are kvs with their values as text.
func attributes(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = strconv.FormatBool(v.BoolValue)
		default:
			m[kv.Key] = protojson.Format(kv.GetValue())
		}
	}
	return m
}

// Spans returns the spans received so far.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans)
}

// Trace returns the spans of the trace id received so far.
func (c *Collector) Trace(id string) []Span {
	var out []Span
	for _, s := range c.Spans() {
		if s.TraceID == id {
			out = append(out, s)
		}
	}
	return out
}

// WaitFor waits until the spans received hold what has, or fails the test
// after a while, listing them.
func (c *Collector) WaitFor(what string, has func([]Span) bool) []Span {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans := c.Spans()
		if has(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			var names []string
			for _, s := range spans {
				names = append(names, s.Service+": "+s.Name+" "+s.TraceID)
			}
			c.t.Fatalf("no spans with %s; received:\n%s", what, strings.Join(names, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Exported is everything received, as text: the spans' names, attributes,
// events and resources, for a scan for what no span may carry.
func (c *Collector) Exported() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw.String()
}

// Find returns the spans that match.
func Find(spans []Span, match func(Span) bool) []Span {
	var out []Span
	for _, s := range spans {
		if match(s) {
			out = append(out, s)
		}
	}
	return out
}
