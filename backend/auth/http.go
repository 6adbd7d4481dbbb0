package auth

import (
	"crypto/subtle"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Handler serves the login and refresh endpoints over a Service.
type Handler struct {
	svc      *Service
	login    http.Handler
	refresh  http.Handler
	compat   http.Handler
	failures *prometheus.CounterVec
	reuses   prometheus.Counter
}

// Problems of this package.
var (
	errInvalidClient = problem.New(http.StatusUnauthorized, problem.CodeInvalidClient, ErrInvalidClient.Error())
	errSharingKey    = problem.New(http.StatusUnauthorized, problem.CodeInvalidSharingKey, ErrInvalidSharingKey.Error())
	errRefreshToken  = problem.New(http.StatusUnauthorized, problem.CodeInvalidRefreshToken, ErrInvalidRefreshToken.Error())
)

// New returns a Handler over a new Service and registers its metrics.
func New(cfg Config) (*Handler, error) {
	h := &Handler{
		svc:      NewService(cfg),
		failures: prometheus.NewCounterVec(metrics.Counter("auth_failures_total", "Failed logins and refreshes by endpoint and problem code."), []string{"endpoint", "code"}),
		reuses:   prometheus.NewCounter(metrics.Counter("refresh_token_reuse_total", "Rotated refresh tokens presented again; each revoked a token family.")),
	}
	if err := metrics.Register(cfg.Metrics, h.failures, h.reuses); err != nil {
		return nil, err
	}
	problems := &web.Problems{
		Known: web.ErrorMap{
			{Err: ErrInvalidClient, Problem: errInvalidClient},
			{Err: ErrInvalidSharingKey, Problem: errSharingKey},
			{Err: ErrInvalidRefreshToken, Problem: errRefreshToken},
			{Err: ErrRefreshTokenReused, Problem: errRefreshToken},
		},
		Log: cfg.Log,
		Observe: func(endpoint string, p *problem.Problem) {
			h.failures.WithLabelValues(endpoint, p.Code).Inc()
		},
	}
	h.login = problems.Handler("login", h.serveLogin)
	h.refresh = problems.Handler("refresh", h.serveRefresh)
	h.compat = problems.Handler("refresh_compat", h.serveRefreshCompat)
	return h, nil
}

// Login serves POST /connect-auth/v1/account/login.
func (h *Handler) Login(w http.ResponseWriter, r *http.Request) { h.login.ServeHTTP(w, r) }

// Refresh serves POST /connect-auth/v1/account/refresh-token. The edge has
// checked the bearer token's signature, issuer and audience (allowing it to
// be expired) and that Client-Id is its subject; RequireCaller has put the
// caller in the context.
func (h *Handler) Refresh(w http.ResponseWriter, r *http.Request) { h.refresh.ServeHTTP(w, r) }

// RefreshCompat serves POST /connect-auth/v1/account/refresh, the refresh
// route of the API's first version: the body's refresh token is the
// credential (as in OAuth 2.0), any bearer token is ignored, and the
// answer is the same token pair as Refresh's.
func (h *Handler) RefreshCompat(w http.ResponseWriter, r *http.Request) { h.compat.ServeHTTP(w, r) }

type loginRequest struct {
	ClientID     string  `json:"client_id"`
	ClientSecret string  `json:"client_secret"`
	SharingKey   *string `json:"sharing_key"`
	// APIKey is the older name of SharingKey ("API token for business
	// id"), which the first official SDKs still send when it is set.
	APIKey *string `json:"api_key"`
	// UserToken, of the original API, has no meaning any more: refused,
	// naming what replaced it.
	UserToken *string `json:"user_token"`
}

// sharingKey returns the sharing key the login asks with, "" for none:
// sharing_key, or api_key, its older name, or both when they are equal.
func (req loginRequest) sharingKey() (string, *problem.Problem) {
	switch {
	case req.UserToken != nil:
		return "", web.BadRequest("user_token is no longer accepted: a login gives client_id and client_secret, " +
			"and sharing_key to act in another workspace")
	case req.SharingKey != nil && req.APIKey != nil && *req.SharingKey != *req.APIKey:
		return "", web.BadRequest("sharing_key and api_key (its older name) differ: send one of them")
	case req.SharingKey != nil && *req.SharingKey == "", req.SharingKey == nil && req.APIKey != nil && *req.APIKey == "":
		return "", web.BadRequest("sharing_key (or api_key, its older name) must not be empty")
	case req.SharingKey != nil:
		return *req.SharingKey, nil
	case req.APIKey != nil:
		return *req.APIKey, nil
	}
	return "", nil
}

func (h *Handler) serveLogin(w http.ResponseWriter, r *http.Request) error {
	var req loginRequest
	if p := web.DecodeRequest(w, r, &req); p != nil {
		return p
	}
	if req.ClientID == "" || req.ClientSecret == "" {
		return web.BadRequest("client_id and client_secret are required")
	}
	sharingKey, p := req.sharingKey()
	if p != nil {
		return p
	}
	c := Credentials{ClientID: req.ClientID, ClientSecret: req.ClientSecret, SharingKey: sharingKey,
		Source: web.SourceAddr(r), Audit: web.AuditEvent(r)}
	pair, err := h.svc.Login(r.Context(), c)
	var te *ThrottledError
	switch {
	case errors.As(err, &te):
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(te.Wait.Seconds())), 10))
		return problem.New(http.StatusTooManyRequests, problem.CodeTooManyAttempts, te.Error())
	case errors.Is(err, ErrBusy):
		w.Header().Set("Retry-After", "1")
		return problem.New(http.StatusServiceUnavailable, problem.CodeBusy, ErrBusy.Error())
	}
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, pair)
	return nil
}

type refreshRequest struct {
	RefreshToken string  `json:"refresh_token"`
	AccessToken  *string `json:"access_token"`
}

func (h *Handler) serveRefresh(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	clientHeader := r.Header.Values("Client-Id")
	switch {
	case len(clientHeader) != 1 || clientHeader[0] == "":
		return problem.New(http.StatusBadRequest, problem.CodeMissingClientID, "the Client-Id header is required once")
	case clientHeader[0] != caller.ClientID:
		return problem.New(http.StatusUnauthorized, problem.CodeClientMismatch, "Client-Id does not match the access token")
	}
	req, p := readRefresh(w, r)
	if p != nil {
		return p
	}
	if req.AccessToken != nil && !sameBearer(r, *req.AccessToken) {
		return problem.New(http.StatusUnauthorized, problem.CodeInvalidToken, "access_token does not match the bearer token")
	}
	pair, err := h.svc.Refresh(r.Context(), caller.ClientID, req.RefreshToken, web.AuditEvent(r))
	return h.answerRefresh(w, pair, err)
}

// serveRefreshCompat binds the token to the clients the request names: its
// Client-Id header, if any, and the owner of the key an encrypted request
// was opened with (which the edge forwards). Their access_token, which
// older clients send expired, proves nothing the refresh token does not.
func (h *Handler) serveRefreshCompat(w http.ResponseWriter, r *http.Request) error {
	client, p := compatClient(r)
	if p != nil {
		return p
	}
	req, p := readRefresh(w, r)
	if p != nil {
		return p
	}
	pair, err := h.svc.RefreshWithToken(r.Context(), req.RefreshToken, client, web.AuditEvent(r))
	return h.answerRefresh(w, pair, err)
}

// readRefresh decodes a refresh body, which must name a refresh token.
func readRefresh(w http.ResponseWriter, r *http.Request) (refreshRequest, *problem.Problem) {
	var req refreshRequest
	if p := web.DecodeRequest(w, r, &req); p != nil {
		return req, p
	}
	if req.RefreshToken == "" {
		return req, web.BadRequest("refresh_token is required")
	}
	return req, nil
}

// answerRefresh answers the outcome of a refresh, counting reuses.
func (h *Handler) answerRefresh(w http.ResponseWriter, pair TokenPair, err error) error {
	if errors.Is(err, ErrRefreshTokenReused) {
		h.reuses.Inc()
	}
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, pair)
	return nil
}

// compatClient returns the client a compatibility refresh says it is: its
// Client-Id header and the owner of its encryption key, which must agree
// when both are given; "" when neither is.
func compatClient(r *http.Request) (string, *problem.Problem) {
	header := r.Header.Values("Client-Id")
	if len(header) > 1 {
		return "", web.BadRequest("the Client-Id header may be given once")
	}
	keyClient := r.Header.Get(contract.HeaderKeyClientID)
	switch {
	case len(header) == 0 || header[0] == "":
		return keyClient, nil
	case keyClient != "" && header[0] != keyClient:
		return "", problem.New(http.StatusUnauthorized, problem.CodeClientMismatch, "Client-Id does not match the encryption key's client")
	}
	return header[0], nil
}

// sameBearer reports in constant time whether r's bearer token is tok.
func sameBearer(r *http.Request, tok string) bool {
	scheme, bearer, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(bearer)), []byte(tok)) == 1
}
