// Package hdcauth is the hdc_auth handler, the first of every API route:
// it times the whole answer (timing.go), cleans the request's headers and
// names the hop's facts (hopheaders.go), refuses a path the backend would
// read otherwise than Caddy routed it (path.go), checks the bearer token
// with the hdc app's verifier and names the client for the handlers after
// it (auth.go); its Caddyfile directive is in caddyfile.go.
package hdcauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/caddymodule/tokenauth"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

func init() {
	caddy.RegisterModule(Auth{})
}

// Auth is the hdc_auth handler. It removes every X-HDC-* header the client
// sent, forwards the client's address as Caddy computed it (behind its
// trusted proxies) in X-HDC-Client-Ip, checks the bearer token, and
// forwards the identity it proves as X-HDC-Client-Id, X-HDC-Workspace-Id,
// X-HDC-Token-Id, and X-HDC-Grant-Id and X-HDC-Session-Id when the token
// has them (and the client as the Caddy variable hdc.client_id,
// edge.ClientID, for hdc_ratelimit and hdc_jwe).
//
// Modes: "token" (the default) requires a valid access token; "refresh"
// accepts an expired one (signature, issuer and audience still checked) and
// requires the Client-Id header to equal its subject; "public" only removes
// the X-HDC-* headers.
type Auth struct {
	Mode string `json:"mode,omitempty"`

	verifier *tokenauth.Verifier
	logger   *zap.Logger
	accepted prometheus.Counter // auth_requests_total{mode=Mode, result="ok"}
}

// Modes of Auth.
const (
	authToken   = "token"
	authRefresh = "refresh"
	authPublic  = "public"
)

// CaddyModule returns the Caddy module information.
func (Auth) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.hdc_auth",
		New: func() caddy.Module { return new(Auth) },
	}
}

// Provision fetches the token verifier from the hdc app.
func (a *Auth) Provision(ctx caddy.Context) error {
	a.logger = ctx.Logger()
	if a.Mode == "" {
		a.Mode = authToken
	}
	a.accepted = edge.Metrics.AuthRequests.WithLabelValues(a.Mode, "ok")
	switch a.Mode {
	case authPublic:
		return nil
	case authToken, authRefresh:
	default:
		return errors.New("hdc_auth: mode must be token, refresh or public")
	}
	app, err := edge.AppOf(ctx)
	if err != nil {
		return err
	}
	if a.verifier, err = app.Verifier(); err != nil {
		return fmt.Errorf("hdc_auth: %w", err)
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler. Every API route starts
// with hdc_auth, which does three things, each in a file of its own: it
// times the whole answer, refusals included (timing.go), cleans the
// request's headers and names the hop's facts (hopheaders.go), and checks
// the bearer token (here).
func (a *Auth) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	return timed(w, r, func(w http.ResponseWriter) error { return a.serve(w, r, next) })
}

func (a *Auth) serve(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	prepare(w, r)
	if !canonicalPath(r.URL) {
		problem.Write(w, errNonCanonicalPath)
		return nil
	}
	if a.Mode == authPublic {
		return next.ServeHTTP(w, r)
	}
	ctx, span := edge.StartSpan(r.Context(), "hdc_auth token")
	claims, err := a.verify(ctx, r)
	if err != nil {
		p := authProblem(w, err)
		edge.EndSpan(span, p, edge.AttrMode.String(a.Mode))
		edge.Metrics.AuthRequests.WithLabelValues(a.Mode, p.Code).Inc()
		a.logger.Info("request refused", append(telemetry.LogFields(r.Context()), zap.String("mode", a.Mode),
			zap.String("path", r.URL.Path), zap.String("code", p.Code), zap.String("reason", reason(err)))...)
		problem.Write(w, p)
		return nil
	}
	if span.IsRecording() { // the attributes escape: not built for a span that records nothing
		edge.EndSpan(span, nil, edge.AttrMode.String(a.Mode))
	}
	a.accepted.Inc()
	forwardIdentity(r, claims)
	return next.ServeHTTP(w, r)
}

// verify checks the request's bearer token for the handler's mode.
func (a *Auth) verify(ctx context.Context, r *http.Request) (*tokenauth.Claims, error) {
	mode := tokenauth.ModeAccess
	if a.Mode == authRefresh {
		mode = tokenauth.ModeRefresh
	}
	token, err := tokenauth.BearerToken(edge.Field(r.Header, "Authorization"))
	if err != nil {
		return nil, err
	}
	claims, err := a.verifier.Verify(ctx, token, mode)
	if err == nil && mode == tokenauth.ModeRefresh {
		err = checkClientID(edge.Field(r.Header, "Client-Id"), claims.Subject)
	}
	return claims, err
}

// forwardIdentity sets the identity headers of the hop, and the client
// the handlers after it read (edge.ClientID), from verified claims.
func forwardIdentity(r *http.Request, claims *tokenauth.Claims) {
	edge.SetClientID(r, claims.Subject)
	edge.SetField(r.Header, contract.HeaderClientID, claims.Subject)
	edge.SetField(r.Header, contract.HeaderWorkspaceID, claims.Workspace)
	edge.SetField(r.Header, contract.HeaderTokenID, claims.ID)
	if claims.Grant != "" {
		edge.SetField(r.Header, contract.HeaderGrantID, claims.Grant)
	}
	if claims.Session != "" {
		edge.SetField(r.Header, contract.HeaderSessionID, claims.Session)
	}
}

// Errors of the refresh mode's Client-Id check.
var (
	errNoClientID       = errors.New("no Client-Id header")
	errClientIDMismatch = errors.New("Client-Id is not the token's subject")
)

func checkClientID(header, subject string) error {
	switch {
	case header == "":
		return errNoClientID
	case header != subject:
		return errClientIDMismatch
	}
	return nil
}

// authProblem maps a refusal to its answer and sets the RFC 6750 challenge.
func authProblem(w http.ResponseWriter, err error) *problem.Problem {
	const realm = `Bearer realm="hdc"`
	h := w.Header()
	switch {
	case errors.Is(err, tokenauth.ErrKeysUnavailable):
		h.Set("Retry-After", "5")
		return problem.New(http.StatusServiceUnavailable, problem.CodeAuthUnavailable,
			"The signing keys of the token issuer cannot be fetched; try again shortly.")
	case errors.Is(err, tokenauth.ErrMissing):
		h.Set("WWW-Authenticate", realm)
		return problem.New(http.StatusUnauthorized, problem.CodeMissingToken,
			"This route needs an Authorization: Bearer <access token> header.")
	case errors.Is(err, tokenauth.ErrExpired):
		h.Set("WWW-Authenticate", realm+`, error="invalid_token", error_description="the access token expired"`)
		return problem.New(http.StatusUnauthorized, problem.CodeTokenExpired, "The access token expired; refresh it.")
	case errors.Is(err, errNoClientID):
		return problem.New(http.StatusBadRequest, problem.CodeMissingClientID, "The refresh route needs a Client-Id header.")
	case errors.Is(err, errClientIDMismatch):
		h.Set("WWW-Authenticate", realm+`, error="invalid_token"`)
		return problem.New(http.StatusUnauthorized, problem.CodeClientMismatch, "Client-Id does not match the access token.")
	default:
		h.Set("WWW-Authenticate", realm+`, error="invalid_token"`)
		return problem.New(http.StatusUnauthorized, problem.CodeInvalidToken, "The access token is not valid.")
	}
}

// reason is the verifier's label for err, for logs.
func reason(err error) string {
	var te *tokenauth.Error
	if errors.As(err, &te) {
		return te.Reason
	}
	return err.Error()
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Auth)(nil)
	_ caddyhttp.MiddlewareHandler = (*Auth)(nil)
	_ caddyfile.Unmarshaler       = (*Auth)(nil)
)
