package backend

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit/search"
	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/records"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/version"
)

// Callers' answers are remembered this long: disabling a client, revoking
// a sharing grant or a login takes effect within it on every route.
const (
	callerTTL   = 2 * time.Second
	callerCache = 10000
)

// routes builds the HTTP metrics and both route tables.
func (s *Server) routes(reg *prometheus.Registry, h handlers) error {
	m, err := newHTTPMetrics(reg)
	if err != nil {
		return err
	}
	s.public = s.publicRoutes(m, h.auth, h.records, h.webhooks, h.tests)
	s.internal = s.internalRoutes(m, reg, h)
	return nil
}

// publicRoutes are the specification's routes, served to the edge alone,
// and the readiness check the edges' health checks ask.
// Every route but login and refresh (which check the client and grant
// themselves) checks on each request that the token's client and grant
// are still in force.
func (s *Server) publicRoutes(m *httpMetrics, a *auth.Handler, rec *records.Handler, wh *webhook.Handler, tests *webhook.TestEvents) http.Handler {
	trail := search.New(s.store, s.log.Named("auditlog"))
	mux := web.NewMux()
	callers := identity.NewCallers(s.identity, s.store, callerCache, callerTTL)
	refused := &web.Problems{Log: s.log, Known: web.ErrorMap{{Err: identity.ErrRevokedCaller,
		Problem: problem.New(http.StatusUnauthorized, problem.CodeUnauthenticated, identity.ErrRevokedCaller.Error())}}}
	protected := func(h http.HandlerFunc) http.Handler {
		return web.RequireCaller(refused.Handler("caller", func(w http.ResponseWriter, r *http.Request) error {
			c, _ := web.CallerFrom(r.Context())
			if err := callers.Check(r.Context(), identity.Caller{Client: c.ClientID, Workspace: c.WorkspaceID,
				Grant: c.GrantID, Session: c.SessionID}); err != nil {
				return err
			}
			h(w, r)
			return nil
		}))
	}
	mux.Handle("POST", contract.PathLogin, http.HandlerFunc(a.Login))
	mux.Handle("POST", contract.PathRefresh, web.RequireCaller(http.HandlerFunc(a.Refresh)))
	mux.Handle("POST", contract.PathRefreshCompat, http.HandlerFunc(a.RefreshCompat))
	mux.Handle("GET", contract.PathRetrieve, protected(rec.Retrieve))
	mux.Handle("GET", contract.PathAuditEvents, protected(trail.Search))
	mux.Handle("POST", contract.PathUpload, protected(rec.Upload))
	mux.Handle("POST", contract.PathSubscriptions, protected(wh.Register))
	mux.Handle("GET", contract.PathSubscriptions, protected(wh.List))
	mux.Handle("DELETE", contract.PathSubscriptions+"/{id}", protected(wh.Delete))
	mux.Handle("GET", contract.PathSubscriptions+"/{id}/deliveries", protected(wh.Deliveries.List))
	mux.Handle("GET", contract.PathSubscriptions+"/{id}/deliveries/{delivery_id}", protected(wh.Deliveries.Get))
	mux.Handle("POST", contract.PathSubscriptions+"/{id}/deliveries/{delivery_id}/redeliver", protected(wh.Deliveries.Redeliver))
	mux.Handle("POST", contract.PathSubscriptions+"/{id}/recover", protected(wh.Deliveries.Recover))
	whLog := s.log.Named("webhook")
	mux.Handle("POST", contract.PathSubscriptions+"/{id}/test", protected(tests.ServeHTTP))
	mux.Handle("POST", contract.PathSubscriptions+"/{id}/signing-key",
		protected(webhook.NewKeyRotation(s.store, s.store, s.cfg.WebhookKeyGrace, whLog).ServeHTTP))
	mux.Handle("PATCH", contract.PathSubscriptions+"/{id}", protected(wh.Patch))
	// The edges' load balancers ask each backend's public listener whether
	// it is ready: their health checks carry no request's headers.
	mux.Handle("GET", contract.PathReady, (&web.Problems{Log: s.log}).Handler("ready", s.ready))
	gate := func(r *http.Request) (*http.Request, *problem.Problem) {
		if r.URL.Path == contract.PathReady {
			return r, nil
		}
		r, p := web.CheckEdge(s.hop != nil, r)
		if p != nil {
			return r, p
		}
		if p := s.deny.Check(r); p != nil {
			return r, p
		}
		return r, s.replays.Check(r)
	}
	return s.observe("public", m, mux, gate)
}

// internalRoutes serve the edge (the JWKS, the key plane and its reports), parsers, the services that
// publish events, and monitoring, each route one role of client
// certificate (web.RequireRole); the health routes serve anyone.
func (s *Server) internalRoutes(m *httpMetrics, reg *prometheus.Registry, h handlers) http.Handler {
	mux := web.NewMux()
	problems := &web.Problems{Log: s.log}
	log := s.log.Named("internal")
	role := func(r contract.Role, h http.Handler) http.Handler { return web.RequireRole(s.hop != nil, r, log, h) }
	mux.Handle("GET", contract.PathJWKS, role(contract.RoleEdge, problems.Handler("jwks", s.jwks)))
	mux.Handle("GET", contract.PathKeyChanges, role(contract.RoleEdge, http.HandlerFunc(h.keys.Changes)))
	mux.Handle("GET", contract.PathKey, role(contract.RoleEdge, http.HandlerFunc(h.keys.Key)))
	mux.Handle("GET", contract.PathKeyFilter, role(contract.RoleEdge, http.HandlerFunc(h.keys.Filter)))
	mux.Handle("GET", contract.PathClientLimits, role(contract.RoleEdge, http.HandlerFunc(h.limits.List)))
	mux.Handle("GET", contract.PathClientLimits+"/{client_id}", role(contract.RoleEdge, http.HandlerFunc(h.limits.One)))
	mux.Handle("POST", contract.PathEdgeReport, role(contract.RoleEdge, http.HandlerFunc(h.reports.Report)))
	mux.Handle("POST", contract.PathResources, role(contract.RoleParser, http.HandlerFunc(h.records.AddResources)))
	mux.Handle("POST", contract.PathEvents, role(contract.RolePublisher, http.HandlerFunc(h.events.Publish)))
	mux.Handle("GET", contract.PathHealth, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := version.Get()
		web.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": v.Version, "revision": v.Revision})
	}))
	mux.Handle("GET", contract.PathReady, problems.Handler("ready", s.ready))
	// A collector that fails (the outbox's, while the database does not
	// answer) leaves the others served: hdc_backend_ready says why.
	metricsOpts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: zap.NewStdLog(log)}
	mux.Handle("GET", contract.PathMetrics, role(contract.RoleScraper, promhttp.HandlerFor(reg, metricsOpts)))
	h.admin.Register(mux)
	// A revoked certificate is refused on every route; the health routes
	// need none, and a request without one passes to be refused by its
	// route.
	return s.observe("internal", m, mux, func(r *http.Request) (*http.Request, *problem.Problem) { return r, s.deny.Check(r) })
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) error {
	set, err := s.issuer.JWKS(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "max-age=60")
	web.WriteJSONBytes(w, http.StatusOK, set)
	return nil
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) error {
	if !s.isReady(r.Context()) {
		return problem.New(http.StatusServiceUnavailable, problem.CodeNotReady, "the store or the signing keys are not available")
	}
	web.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

// isReady reports whether the backend can serve: its store answers and a
// signing key is loaded (GET /readyz, hdc_backend_ready).
func (s *Server) isReady(ctx context.Context) bool {
	return s.store.Ping(ctx) == nil && s.issuer.Ready()
}
