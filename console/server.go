package console

import (
	"embed"
	"io/fs"
	"net/http"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Server serves the console's pages over an Admin API.
type Server struct {
	api      adminapi.API
	log      *zap.Logger
	sessions *sessions
	pages    *pages
	hosts    hostSet
	handler  http.Handler
	// handover completes the credentials files the console hands over.
	handover Handover

	mu sync.Mutex
	me *adminapi.Person // whoami's answer once given: the certificate does not change
}

// New returns the console over api, admitting the browser that presents
// token once (Token makes one), under the loopback names (Run adds the
// host of its listen address). log records each request's path and
// status, never a query, a form or a secret. The credentials files it
// hands over name no base URL (Run's Config does).
func New(api adminapi.API, token string, log *zap.Logger) *Server {
	return newServer(api, token, log, hostsOf(DefaultListen), Handover{})
}

// newServer is New answering for hosts, its credentials files completed
// with h.
func newServer(api adminapi.API, token string, log *zap.Logger, hosts hostSet, h Handover) *Server {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Server{api: api, log: log, sessions: newSessions(token), pages: mustParsePages(), hosts: hosts, handover: h}
	s.handler = s.routes()
	return s
}

// ServeHTTP serves the console.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// route is a page, a change or a download of the console: its pattern
// ("GET /clients/{id}") and what serves it, behind the session.
type route struct {
	pattern string
	handler http.Handler
}

// table is every route of the console. Routes reads its patterns, so
// that the docs' table of the operator's commands is held to the routes
// the console serves.
func (s *Server) table() []route {
	page := func(pattern string, fn pageFunc) route { return route{pattern, s.session(s.page(fn))} }
	change := func(pattern string, fn changeFunc) route { return route{pattern, s.session(s.change(fn))} }
	download := func(pattern string, fn http.HandlerFunc) route { return route{pattern, s.session(fn)} }
	return slices.Concat([]route{
		page("GET /{$}", s.fleetPage),
		page("GET /fleet", s.fleetPage),
		page("GET /clients", s.clientsPage),
		page("GET /clients/{id}", s.clientPage),
		page("GET /clients/{id}/confirm", s.confirmPage),
		page("GET /keys", s.keysPage),
		page("GET /audit", s.auditPage),
		page("GET /audit/verify", s.verifyPage),
		download("GET /audit/export", s.auditExport),
		page("GET /results/{key}", s.resultPage),
		download("GET /results/{key}/credentials", s.downloadCredentials),
		change("POST /clients", s.createClient),
		change("POST /clients/{id}", s.updateClient),
		change("POST /clients/{id}/disable", s.disableClient),
		change("POST /clients/{id}/limits", s.setLimits),
		change("POST /clients/{id}/limits/clear", s.clearLimits),
		change("POST /clients/{id}/keys", s.addKey),
		change("POST /clients/{id}/keys/rotate", s.rotateKey),
		change("POST /keys/{kid}/retire", s.retireKey),
	}, s.webhookRoutes(page, change), s.sharingRoutes(page, change), s.workspaceRoutes(page, change), s.peopleRoutes(page, change))
}

// Routes returns the pattern of every page, change and download of the
// console ("GET /clients/{id}", "POST /clients"), as docs/console.md's
// table of the operator's commands names them.
func Routes() []string {
	var out []string
	for _, rt := range (&Server{}).table() {
		out = append(out, rt.pattern)
	}
	return out
}

// routes returns the console's mux behind its guards: the headers every
// answer carries, the Host check, the cross-origin check of every change,
// the session.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /login", s.login)
	for _, rt := range s.table() {
		mux.Handle(rt.pattern, rt.handler)
	}
	mux.Handle("/", s.session(s.page(func(*http.Request) (view, error) { return view{}, errNoPage })))
	// net/http's CrossOriginProtection is the maintained library for the
	// cross-origin check (Sec-Fetch-Site, then Origin against Host): it
	// refuses any change another origin's page sends. It lets through a
	// request with neither header, as a non-browser client sends, which
	// the session cookie would then authorize; the session's CSRF token
	// (checkCSRF) closes that gap with the standard library alone, where
	// gorilla/csrf would add a dependency for the same token.
	return secureHeaders(s.logged(s.checkHost(http.NewCrossOriginProtection().Handler(mux))))
}

// logged logs each request's method, path and status: never its query
// (a token, a search) nor its form (a secret).
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		s.log.Info("console", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Int("status", rec.status))
	})
}

// statusRecorder remembers the status of an answer.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// contentSecurityPolicy admits the console's own script, style and images
// and nothing else: no inline script or style, no frame, forms posted only
// to the console.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secureHeaders sets the headers of every answer: the policy, no caching
// (a page may show a secret once), no referrer (the login URL carries the
// token), no sniffing.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}
