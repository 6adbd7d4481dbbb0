package backend

import (
	"net/http"
	"runtime/debug"
	"strconv"

	"github.com/felixge/httpsnoop"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// httpMetrics count and time requests by listener, route and status.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(metrics.Counter("http_requests_total", "HTTP requests by listener, route pattern and status code."), []string{"listener", "route", "code"}),
		duration: prometheus.NewHistogramVec(metrics.Histogram("http_request_duration_seconds", "HTTP request durations by listener and route pattern.", prometheus.DefBuckets), []string{"listener", "route"}),
		inFlight: prometheus.NewGaugeVec(metrics.Gauge("http_requests_in_flight", "HTTP requests being served, by listener."), []string{"listener"}),
	}
	if err := metrics.Register(reg, m.requests, m.duration, m.inFlight); err != nil {
		return nil, err
	}
	return m, nil
}

// The patterns of the health routes and the edges' reports (web.Mux).
const (
	healthRoute = http.MethodGet + " " + contract.PathHealth
	readyRoute  = http.MethodGet + " " + contract.PathReady
	reportRoute = http.MethodPost + " " + contract.PathEdgeReport
)

// routine reports whether route is asked at an interval by every edge (a
// health check every second, a report every 5 s): no trace is made of
// it, and an answer of 2xx is logged at debug, not to bury the requests.
func routine(route string) bool {
	return route == healthRoute || route == readyRoute || route == reportRoute
}

// observe serves mux's routes with panic recovery, metrics and an access
// log line per request. A gate, when given, runs first and may refuse the
// request. The log has the route pattern, never the URL: query strings
// carry record identifiers.
func (s *Server) observe(listener string, m *httpMetrics, mux *web.Mux, gate func(*http.Request) (*http.Request, *problem.Problem)) http.Handler {
	log := s.log.Named(listener)
	h := recoverer(log, mux)
	inFlight := m.inFlight.WithLabelValues(listener)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Inc()
		s.active.Add(1)
		defer func() { inFlight.Dec(); s.active.Add(-1) }()
		route := mux.Pattern(r)
		if route == "" {
			route = "redirect"
		}
		var span trace.Span
		if s.tracing && !routine(route) {
			r, span = startSpan(r, listener, route)
		}
		serve, admitted := h, true
		if gate != nil {
			var p *problem.Problem
			if r, p = gate(r); p != nil {
				serve, admitted = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { problem.Write(w, p) }), false
			}
		}
		mt := httpsnoop.CaptureMetrics(serve, w, r)
		m.requests.WithLabelValues(listener, route, strconv.Itoa(mt.Code)).Inc()
		m.duration.WithLabelValues(listener, route).Observe(mt.Duration.Seconds())
		if span != nil {
			endSpan(span, mt.Code)
		}
		fields := []zap.Field{
			zap.String("method", contract.Method(r.Method)), zap.String("route", route), zap.Int("status", mt.Code),
			zap.Int64("bytes_in", r.ContentLength), zap.Int64("bytes_out", mt.Written),
			zap.Duration("duration", mt.Duration), zap.String("source", web.SourceAddr(r)),
		}
		if admitted {
			fields = append(fields, identityFields(r.Header)...)
		}
		fields = append(fields, telemetry.LogFields(r.Context())...)
		if routine(route) && mt.Code < 300 {
			log.Debug("request", fields...)
			return
		}
		log.Info("request", fields...)
	})
}

// identityFields are the log fields of the identity headers the edge set.
// They are read only from requests the gate admitted (anyone else's
// headers are the client's own), and only when they have the shape the
// edge forwards: client and token ids are UUIDs, key ids those of the
// edge's key registry.
func identityFields(h http.Header) []zap.Field {
	var fields []zap.Field
	for _, hf := range [...]struct {
		header, field string
		valid         func(string) bool
	}{
		{contract.HeaderClientID, "client_id", contract.IsUUID},
		{contract.HeaderTokenID, "token_id", contract.IsUUID},
		{contract.HeaderGrantID, "grant_id", contract.IsUUID},
		{contract.HeaderKeyID, "kid", clientkey.ValidKid},
		{contract.HeaderRequestID, "request_id", contract.IsUUID},
	} {
		if v := h.Get(hf.header); hf.valid(v) {
			fields = append(fields, zap.String(hf.field, v))
		}
	}
	return fields
}

// recoverer turns a panic in h into a logged 500 problem.
func recoverer(log *zap.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				telemetry.Logger(r.Context(), log).Error("handler panicked", zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
				problem.Write(w, web.Internal())
			}
		}()
		h.ServeHTTP(w, r)
	})
}
