package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// bigTracestate is the tracestate the review sent, which OpenTelemetry
// refuses: 33 members, 8 KiB.
func bigTracestate() string {
	members := make([]string, 33)
	for i := range members {
		members[i] = fmt.Sprintf("k%02d=%s", i, strings.Repeat("v", 244))
	}
	return strings.Join(members, ",")
}

// hopTraceContexts are the client's trace contexts of the security review
// of tracing (finding 3), and one the edge parses: the traceparent and tracestate
// fields sent, whether the edge parses the traceparent, and the
// tracestate that crosses the hop ("" for none).
var hopTraceContexts = []struct {
	name                    string
	traceparent, tracestate []string
	parsed                  bool
	crosses                 string
}{
	{"W3C's example, with a tracestate", []string{clientParent}, []string{"congo=t61rcWkgMzE"}, true, "congo=t61rcWkgMzE"},
	{"a traceparent of 8 KiB", []string{clientParent + strings.Repeat("0", 8<<10-len(clientParent))}, nil, false, ""},
	{"version ff", []string{"ff" + clientParent[2:]}, nil, false, ""},
	{"two traceparents", []string{clientParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, nil, false, ""},
	{"a bearer token", []string{"Bearer eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhIGNsaWVudCJ9.c2lnbmF0dXJl"}, nil, false, ""},
	{"a tracestate of 33 members, 8 KiB", []string{clientParent}, []string{bigTracestate()}, true, ""},
	{"an orphan tracestate", nil, []string{"congo=t61rcWkgMzE"}, false, ""},
}

// hopRecorder stands in for a backend: it keeps the trace context fields
// and the baggage of each request it is sent, and refuses the request as
// a backend refuses a login of a client it does not know.
type hopRecorder struct {
	mu   sync.Mutex
	seen []http.Header
}

func (h *hopRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, http.Header{"Traceparent": r.Header.Values("Traceparent"),
		"Tracestate": r.Header.Values("Tracestate"), "Baggage": r.Header.Values("Baggage")})
	h.mu.Unlock()
	problem.Write(w, problem.New(http.StatusUnauthorized, problem.CodeInvalidClient, "The stand-in knows no client."))
}

// sent returns the fields of the n-th request the recorder was sent.
func (h *hopRecorder) sent(t *testing.T, n int) http.Header {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.seen) != n+1 {
		t.Fatalf("the stand-in was sent %d requests, want %d", len(h.seen), n+1)
	}
	return h.seen[n]
}

// TestTraceContextAtTheHop (security review of tracing, finding 3):
// through the reference Caddyfile to a backend's stand-in that records
// what it is sent, only a trace context the edge parsed crosses the hop.
// With tracing off, the default, the client's traceparent crosses only
// when it is one field of W3C's version 00, its sampled flag cleared, and
// its tracestate only beside it and when it parses within 512 bytes: the
// review's 8 KiB traceparent, version ff, two traceparents, a bearer
// token, a 33-member tracestate of 8 KiB and an orphan tracestate do not
// cross. With tracing on, the hop carries the edge's span, in the client's
// trace when the edge parsed the client's traceparent, and the same
// tracestate. Baggage never crosses.
func TestTraceContextAtTheHop(t *testing.T) {
	t.Parallel()
	t.Run("tracing off", func(t *testing.T) { checkHopTraceContext(t, nil) })
	t.Run("tracing on", func(t *testing.T) { checkHopTraceContext(t, hdctest.StartCollector(t)) })
}

// checkHopTraceContext sends hopTraceContexts through a stack whose edge
// traces to col, or not at all when col is nil.
func checkHopTraceContext(t *testing.T, col *hdctest.Collector) {
	rec := new(hopRecorder)
	var env []string
	if col != nil {
		env = col.Env()
	}
	s := hdctest.StartStackBeforeStandIn(t, env, hdctest.NewStandIn(t, rec))
	for i, tt := range hopTraceContexts {
		sendLogin(t, s, http.Header{"Traceparent": tt.traceparent, "Tracestate": tt.tracestate, "Baggage": {"user.id=a-client"}})
		hop := rec.sent(t, i)
		if got := strings.Join(hop["Tracestate"], ","); got != tt.crosses || len(hop["Tracestate"]) > 1 || len(hop["Baggage"]) > 0 {
			t.Errorf("%s: the hop's tracestate %q and baggage %q, want tracestate %q and no baggage",
				tt.name, hop["Tracestate"], hop["Baggage"], tt.crosses)
		}
		switch {
		case col != nil:
			checkEdgeParent(t, col, tt.name, hop["Traceparent"], tt.parsed)
		case tt.parsed && !slices.Equal(hop["Traceparent"], []string{clientParent[:53] + "00"}):
			t.Errorf("%s: the hop's traceparent %q, want the client's, not sampled", tt.name, hop["Traceparent"])
		case !tt.parsed && len(hop["Traceparent"]) > 0:
			t.Errorf("%s: the hop's traceparent %q, want none", tt.name, hop["Traceparent"])
		}
	}
}

// checkEdgeParent holds the traceparent fields of a traced request's hop
// to one, the edge's span's, in the client's trace when the edge parsed
// the client's traceparent and in a trace of its own otherwise.
func checkEdgeParent(t *testing.T, col *hdctest.Collector, name string, traceparent []string, parsed bool) {
	t.Helper()
	if len(traceparent) != 1 || len(traceparent[0]) != 55 || !strings.HasPrefix(traceparent[0], "00-") {
		t.Errorf("%s: the hop's traceparent %q, want the edge's", name, traceparent)
		return
	}
	trace, span := traceparent[0][3:35], traceparent[0][36:52]
	if (trace == clientTrace) != parsed {
		t.Errorf("%s: the hop's trace %s, the client's parsed %v", name, trace, parsed)
		return
	}
	col.WaitFor(name+": the edge's span the hop names", func(spans []hdctest.Span) bool {
		return len(hdctest.Find(spans, func(s hdctest.Span) bool {
			return s.Service == "hdc-edge" && s.TraceID == trace && s.SpanID == span && (s.ParentID == clientSpan) == parsed
		})) == 1
	})
}

// sendLogin posts a login of no client to the stack's edge with the
// fields given; the stand-in refuses it.
func sendLogin(t *testing.T, s *hdctest.Stack, fields http.Header) {
	t.Helper()
	req, err := http.NewRequest("POST", s.Edge+hdctest.LoginPath,
		strings.NewReader(`{"client_id":"c1d4e2a8-0000-4000-8000-000000000000","client_secret":"wrong"}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range fields {
		req.Header[name] = values
	}
	req.Header.Set("Content-Type", hdctest.JSONType)
	s.Plant(req)
	resp, err := s.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the stand-in's login: %d", resp.StatusCode)
	}
}

// TestClientCannotForceSampling (security review of tracing, finding 4):
// with OTEL_TRACES_SAMPLER=parentbased_traceidratio at ratio 0 on the edge
// and the backend, requests that any stranger may send (the JWKS, failed
// logins) with a traceparent whose sampled flag is set make no span, at
// the edge or the backend; each made a trace of several before. The same
// requests from a trusted proxy, with HDC_TRACE_TRUST_PARENT set to
// trusted_proxies, are sampled as their flag says.
func TestClientCannotForceSampling(t *testing.T) {
	t.Parallel()
	col := hdctest.StartCollector(t)
	// The last value of a name counts, as os/exec reads the environment.
	env := append(col.Env(), "OTEL_TRACES_SAMPLER=parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG=0")
	s := hdctest.StartStackEnv(t, env, append(env, "HDC_TRACE_TRUST_PARENT=trusted_proxies", "HDC_TRUSTED_PROXIES=127.0.0.2/32"))
	c := s.NewClient("forced-sampling")
	forced := sendSampled(t, s, c, "127.0.0.1", 50)
	trusted := sendSampled(t, s, c, "127.0.0.2", 4)
	col.WaitFor("the trusted proxy's traces, at the edge and the backend", func(spans []hdctest.Span) bool {
		got := spansByTrace(spans, trusted)
		for id := range trusted {
			if got[id]["hdc-edge"] == 0 || got[id]["hdc-backend"] == 0 {
				return false
			}
		}
		return true
	})
	// The stranger's requests came first: their spans, had they any,
	// were exported before the trusted proxy's.
	sampled := spansByTrace(col.Spans(), forced)
	edge, backend := 0, 0
	for _, services := range sampled {
		edge, backend = edge+services["hdc-edge"], backend+services["hdc-backend"]
	}
	if len(sampled) > 0 {
		t.Fatalf("%d of the stranger's %d traces sampled, as their flag asked: %d spans of the edge, %d of the backend",
			len(sampled), len(forced), edge, backend)
	}
}

// sendSampled sends n requests as a stranger may from the loopback
// address ip, each with a sampled traceparent of a trace of its own: half
// get the JWKS, half log in as c with a wrong secret. It returns their
// trace ids.
func sendSampled(t *testing.T, s *hdctest.Stack, c *hdctest.APIClient, ip string, n int) map[string]bool {
	t.Helper()
	client := s.Checked(hdctest.FromAddr(ip))
	ids := map[string]bool{}
	for i := range n {
		id := make([]byte, 16)
		_, _ = rand.Read(id)
		ids[hex.EncodeToString(id)] = true
		req, _ := http.NewRequest("GET", s.Edge+"/.well-known/jwks.json", nil)
		if i%2 == 1 {
			req, _ = http.NewRequest("POST", s.Edge+hdctest.LoginPath,
				strings.NewReader(`{"client_id":"`+c.ID+`","client_secret":"not-its-secret"}`))
			req.Header.Set("Content-Type", hdctest.JSONType)
		}
		req.Header.Set("Traceparent", "00-"+hex.EncodeToString(id)+"-b7ad6b7169203331-01")
		s.Plant(req)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[string][]int{"GET": {200}, "POST": {401, 429}}[req.Method]; !slices.Contains(want, resp.StatusCode) {
			t.Fatalf("%s %s from %s: %d", req.Method, req.URL.Path, ip, resp.StatusCode)
		}
	}
	return ids
}

// spansByTrace counts the spans of the traces ids names, by trace id and
// service.
func spansByTrace(spans []hdctest.Span, ids map[string]bool) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, s := range spans {
		if !ids[s.TraceID] {
			continue
		}
		if out[s.TraceID] == nil {
			out[s.TraceID] = map[string]int{}
		}
		out[s.TraceID][s.Service]++
	}
	return out
}
