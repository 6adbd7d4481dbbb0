package backend

import (
	"net/http"
	"runtime/debug"
	"strconv"

	"github.com/felixge/httpsnoop"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/records"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Public API paths.
const (
	PathLogin         = "/connect-auth/v1/account/login"
	PathRefresh       = "/connect-auth/v1/account/refresh-token"
	PathRetrieve      = "/health/api/v1/fhir/retrieve"
	PathSubscriptions = "/notification/v1/connect/webhook/subscriptions"
	PathUpload        = "/mr/api/v2/docs"
)

// Internal paths.
const (
	PathJWKS      = "/.well-known/jwks.json"
	PathResources = "/internal/v1/records/{care_context_id}/resources"
	PathEvents    = "/internal/v1/events"
	PathHealth    = "/healthz"
	PathReady     = "/readyz"
	PathMetrics   = "/metrics"
)

// publicRoutes are the specification's routes, behind the edge secret.
func (s *Server) publicRoutes(m *httpMetrics, a *auth.Handler, rec *records.Handler, wh *webhook.Handler) http.Handler {
	mux := web.NewMux()
	protected := func(h http.HandlerFunc) http.Handler { return web.RequireCaller(h) }
	mux.Handle("POST", PathLogin, http.HandlerFunc(a.Login))
	mux.Handle("POST", PathRefresh, protected(a.Refresh))
	mux.Handle("GET", PathRetrieve, protected(rec.Retrieve))
	mux.Handle("POST", PathUpload, protected(rec.Upload))
	mux.Handle("POST", PathSubscriptions, protected(wh.Register))
	mux.Handle("GET", PathSubscriptions, protected(wh.List))
	mux.Handle("DELETE", PathSubscriptions+"/{id}", protected(wh.Delete))
	gate := func(r *http.Request) (*http.Request, *problem.Problem) {
		return web.CheckEdgeSecret(s.cfg.EdgeSecret, r)
	}
	return s.observe("public", m, mux, gate)
}

// internalRoutes must only be reachable by the edge, parsers, the services
// that publish events, and monitoring: none of them authenticates.
func (s *Server) internalRoutes(m *httpMetrics, reg *prometheus.Registry, rec *records.Handler, events *webhook.Ingress) http.Handler {
	mux := web.NewMux()
	mux.Handle("GET", PathJWKS, http.HandlerFunc(s.jwks))
	mux.Handle("POST", PathResources, http.HandlerFunc(rec.AddResources))
	mux.Handle("POST", PathEvents, http.HandlerFunc(events.Publish))
	mux.Handle("GET", PathHealth, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}))
	mux.Handle("GET", PathReady, http.HandlerFunc(s.ready))
	mux.Handle("GET", PathMetrics, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return s.observe("internal", m, mux, nil)
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	set, err := s.issuer.JWKS(r.Context())
	if err != nil {
		s.log.Error("reading signing keys failed", zap.Error(err))
		problem.Write(w, web.Internal())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(set)))
	w.Header().Set("Cache-Control", "max-age=60")
	_, _ = w.Write(set)
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if err := s.store.Ping(r.Context()); err != nil || !s.issuer.Ready() {
		problem.Write(w, problem.New(http.StatusServiceUnavailable, "not_ready", "the store or the signing keys are not available"))
		return
	}
	web.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// httpMetrics count and time requests by listener, route and status.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hdc_backend_http_requests_total",
			Help: "HTTP requests by listener, route pattern and status code.",
		}, []string{"listener", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hdc_backend_http_request_duration_seconds",
			Help:    "HTTP request durations by listener and route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"listener", "route"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hdc_backend_http_requests_in_flight",
			Help: "HTTP requests being served, by listener.",
		}, []string{"listener"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
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
		defer inFlight.Dec()
		route := mux.Pattern(r)
		if route == "" {
			route = "redirect"
		}
		serve := h
		if gate != nil {
			var p *problem.Problem
			if r, p = gate(r); p != nil {
				serve = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { problem.Write(w, p) })
			}
		}
		mt := httpsnoop.CaptureMetrics(serve, w, r)
		m.requests.WithLabelValues(listener, route, strconv.Itoa(mt.Code)).Inc()
		m.duration.WithLabelValues(listener, route).Observe(mt.Duration.Seconds())
		fields := []zap.Field{
			zap.String("method", r.Method), zap.String("route", route), zap.Int("status", mt.Code),
			zap.Int64("bytes_in", r.ContentLength), zap.Int64("bytes_out", mt.Written),
			zap.Duration("duration", mt.Duration), zap.String("source", web.SourceAddr(r)),
		}
		// Identity headers are logged when they have the shape of ids.
		for _, hf := range [...]struct{ header, field string }{
			{web.HeaderClientID, "client_id"}, {web.HeaderTokenID, "token_id"}, {web.HeaderKeyID, "kid"},
		} {
			if v := r.Header.Get(hf.header); identity.ValidID(v) {
				fields = append(fields, zap.String(hf.field, v))
			}
		}
		log.Info("request", fields...)
	})
}

// recoverer turns a panic in h into a logged 500 problem.
func recoverer(log *zap.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error("handler panicked", zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
				problem.Write(w, web.Internal())
			}
		}()
		h.ServeHTTP(w, r)
	})
}
