// Package auth serves login and refresh: it exchanges client credentials
// (and optionally a sharing key) for a token pair, and rotates refresh
// tokens, revoking a whole login when a rotated token comes back.
//
// Refresh tokens are opaque 256-bit random strings the store knows only by
// their SHA-256. Each login starts a family; every refresh consumes the
// presented token and issues the next one in the family.
package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/credential"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/token"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// refreshTokenPrefix marks refresh tokens.
const refreshTokenPrefix = "hdc_rt_"

// maxSecretLen bounds the secrets a login may present: longer ones cannot be
// ours, and hashing them would only cost time.
const maxSecretLen = 512

// Config configures a Handler.
type Config struct {
	Identity *identity.Service
	Issuer   *token.Issuer
	Tokens   store.Tokens
	// RefreshTTL is the lifetime of each refresh token.
	RefreshTTL time.Duration
	// ByClient and ByAddress throttle login attempts per client id and per
	// source address.
	ByClient  Limiter
	ByAddress Limiter
	Log       *zap.Logger
	Metrics   prometheus.Registerer
}

// Handler serves the login and refresh endpoints.
type Handler struct {
	cfg Config
	now func() time.Time

	failures *prometheus.CounterVec
	reuses   prometheus.Counter
}

// New returns a Handler and registers its metrics.
func New(cfg Config) (*Handler, error) {
	h := &Handler{
		cfg: cfg,
		now: time.Now,
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hdc_backend_auth_failures_total",
			Help: "Failed logins and refreshes by endpoint and problem code.",
		}, []string{"endpoint", "code"}),
		reuses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hdc_backend_refresh_token_reuse_total",
			Help: "Rotated refresh tokens presented again; each revoked a token family.",
		}),
	}
	if err := metrics.Register(cfg.Metrics, h.failures, h.reuses); err != nil {
		return nil, err
	}
	return h, nil
}

// TokenPair is the answer of login and refresh.
type TokenPair struct {
	AccessToken      string `json:"access_token"`
	ExpiresIn        int64  `json:"expires_in"`
	RefreshExpiresIn int64  `json:"refresh_expires_in"`
	RefreshToken     string `json:"refresh_token"`
}

type loginRequest struct {
	ClientID     string  `json:"client_id"`
	ClientSecret string  `json:"client_secret"`
	SharingKey   *string `json:"sharing_key"`
}

// Problems of this package.
var (
	errInvalidClient = problem.New(http.StatusUnauthorized, problem.CodeInvalidClient, identity.ErrInvalidClient.Error())
	errSharingKey    = problem.New(http.StatusUnauthorized, problem.CodeInvalidSharingKey, identity.ErrInvalidSharingKey.Error())
	errRefreshToken  = problem.New(http.StatusUnauthorized, problem.CodeInvalidRefreshToken, "the refresh token is not valid")
)

// Login serves POST /connect-auth/v1/account/login.
func (h *Handler) Login(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if p := web.DecodeRequest(w, r, &req); p != nil {
		h.fail(w, "login", p)
		return
	}
	switch {
	case req.ClientID == "" || req.ClientSecret == "":
		h.fail(w, "login", web.BadRequest("client_id and client_secret are required"))
		return
	case req.SharingKey != nil && *req.SharingKey == "":
		h.fail(w, "login", web.BadRequest("sharing_key must not be empty"))
		return
	}
	addr := web.SourceAddr(r)
	release, wait, ok, err := h.take(r.Context(), addr, req.ClientID)
	if err != nil {
		h.cfg.Log.Error("login throttling failed", zap.Error(err))
		h.fail(w, "login", web.Internal())
		return
	}
	if !ok {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
		h.fail(w, "login", problem.New(http.StatusTooManyRequests, problem.CodeTooManyAttempts,
			"too many failed logins; retry later"))
		return
	}
	p, err := h.authenticate(r.Context(), req)
	switch {
	case errors.Is(err, identity.ErrInvalidClient):
		h.cfg.Log.Info("login refused", zap.String("source", addr), loggedClientID(req.ClientID))
		h.fail(w, "login", errInvalidClient)
		return
	case errors.Is(err, identity.ErrInvalidSharingKey):
		h.cfg.Log.Info("login with an invalid sharing key", zap.String("source", addr), loggedClientID(req.ClientID))
		h.fail(w, "login", errSharingKey)
		return
	case err != nil:
		h.cfg.Log.Error("login failed", zap.Error(err))
		h.fail(w, "login", web.Internal())
		return
	}
	release()
	pair, err := h.startFamily(r.Context(), p)
	if err != nil {
		h.cfg.Log.Error("login failed", zap.Error(err))
		h.fail(w, "login", web.Internal())
		return
	}
	h.cfg.Log.Info("login", zap.String("client_id", p.ClientID), zap.String("workspace_id", p.WorkspaceID),
		zap.String("grant_id", p.GrantID))
	web.WriteJSON(w, http.StatusOK, pair)
}

func (h *Handler) authenticate(ctx context.Context, req loginRequest) (identity.Principal, error) {
	key := ""
	if req.SharingKey != nil {
		key = *req.SharingKey
	}
	if len(req.ClientSecret) > maxSecretLen || len(key) > maxSecretLen {
		// Still do the work a real attempt does, so length tells nothing.
		_, _ = h.cfg.Identity.Authenticate(ctx, "", "", "")
		return identity.Principal{}, identity.ErrInvalidClient
	}
	return h.cfg.Identity.Authenticate(ctx, req.ClientID, req.ClientSecret, key)
}

// startFamily records a new login and issues its first token pair.
func (h *Handler) startFamily(ctx context.Context, p identity.Principal) (TokenPair, error) {
	now := h.now()
	refresh := credential.NewToken(refreshTokenPrefix)
	f := store.RefreshFamily{
		ID:          uuid.NewString(),
		ClientID:    p.ClientID,
		WorkspaceID: p.WorkspaceID,
		GrantID:     p.GrantID,
		CreatedAt:   now,
	}
	if err := h.cfg.Tokens.CreateRefreshFamily(ctx, f, h.refreshToken(refresh, now)); err != nil {
		return TokenPair{}, err
	}
	return h.pair(p.ClientID, p.WorkspaceID, refresh)
}

func (h *Handler) refreshToken(tok string, now time.Time) store.RefreshToken {
	return store.RefreshToken{Hash: credential.TokenHash(tok), CreatedAt: now, ExpiresAt: now.Add(h.cfg.RefreshTTL)}
}

func (h *Handler) pair(clientID, workspaceID, refresh string) (TokenPair, error) {
	acc, err := h.cfg.Issuer.Issue(clientID, workspaceID)
	if err != nil {
		return TokenPair{}, err
	}
	return TokenPair{
		AccessToken:      acc.Token,
		ExpiresIn:        int64(acc.ExpiresIn / time.Second),
		RefreshExpiresIn: int64(h.cfg.RefreshTTL / time.Second),
		RefreshToken:     refresh,
	}, nil
}

type refreshRequest struct {
	RefreshToken string  `json:"refresh_token"`
	AccessToken  *string `json:"access_token"`
}

// Refresh serves POST /connect-auth/v1/account/refresh-token. The edge has
// checked the bearer token's signature, issuer and audience (allowing it to
// be expired) and that Client-Id is its subject; RequireCaller has put the
// caller in the context.
func (h *Handler) Refresh(w http.ResponseWriter, r *http.Request) {
	caller, _ := web.CallerFrom(r.Context())
	clientHeader := r.Header.Values("Client-Id")
	switch {
	case len(clientHeader) != 1 || clientHeader[0] == "":
		h.fail(w, "refresh", web.BadRequest("the Client-Id header is required once"))
		return
	case clientHeader[0] != caller.ClientID:
		h.fail(w, "refresh", problem.New(http.StatusUnauthorized, problem.CodeInvalidClient, "Client-Id does not match the access token"))
		return
	}
	var req refreshRequest
	if p := web.DecodeRequest(w, r, &req); p != nil {
		h.fail(w, "refresh", p)
		return
	}
	if req.RefreshToken == "" {
		h.fail(w, "refresh", web.BadRequest("refresh_token is required"))
		return
	}
	if req.AccessToken != nil && !sameBearer(r, *req.AccessToken) {
		h.fail(w, "refresh", problem.New(http.StatusUnauthorized, problem.CodeInvalidToken, "access_token does not match the bearer token"))
		return
	}
	ctx := r.Context()
	if err := h.cfg.Identity.CheckClient(ctx, caller.ClientID); err != nil {
		h.refuse(w, err, errInvalidClient)
		return
	}
	now := h.now()
	hash := credential.TokenHash(req.RefreshToken)
	// Everything that can fail is checked before the token is consumed, so
	// that a client whose refresh failed on the server's side can retry with
	// the same token instead of being taken for a thief.
	f, err := h.cfg.Tokens.RefreshFamilyOf(ctx, caller.ClientID, hash)
	if err != nil {
		h.refuse(w, err, errRefreshToken)
		return
	}
	if f.GrantID != "" && f.RevokedAt.IsZero() {
		err := h.cfg.Identity.CheckGrant(ctx, f.GrantID, caller.ClientID)
		if errors.Is(err, identity.ErrInvalidSharingKey) {
			// The grant is gone for good: so is every login made with it.
			if rerr := h.cfg.Tokens.RevokeRefreshFamily(ctx, f.ID, now); rerr != nil {
				h.cfg.Log.Error("revoking a refresh family failed", zap.Error(rerr))
			}
		}
		if err != nil {
			h.refuse(w, err, errSharingKey)
			return
		}
	}
	next := credential.NewToken(refreshTokenPrefix)
	pair, err := h.pair(caller.ClientID, f.WorkspaceID, next)
	if err != nil {
		h.refuse(w, err, nil)
		return
	}
	// The rotation decides: a token that is expired, consumed or of a
	// revoked family is refused here, atomically.
	_, err = h.cfg.Tokens.RotateRefreshToken(ctx, caller.ClientID, hash, h.refreshToken(next, now), now)
	switch {
	case errors.Is(err, store.ErrTokenReused):
		h.reuses.Inc()
		h.cfg.Log.Warn("rotated refresh token presented again; its family is revoked", zap.String("client_id", caller.ClientID))
		h.fail(w, "refresh", errRefreshToken)
		return
	case err != nil:
		h.refuse(w, err, errRefreshToken)
		return
	}
	web.WriteJSON(w, http.StatusOK, pair)
}

// refuse answers with p when err is one of the expected refusals (a wrong
// identity, a store miss) and with a logged 500 otherwise.
func (h *Handler) refuse(w http.ResponseWriter, err error, p *problem.Problem) {
	if p != nil && (errors.Is(err, store.ErrNotFound) || errors.Is(err, identity.ErrInvalidClient) ||
		errors.Is(err, identity.ErrInvalidSharingKey)) {
		h.fail(w, "refresh", p)
		return
	}
	h.cfg.Log.Error("refresh failed", zap.Error(err))
	h.fail(w, "refresh", web.Internal())
}

func (h *Handler) fail(w http.ResponseWriter, endpoint string, p *problem.Problem) {
	h.failures.WithLabelValues(endpoint, p.Code).Inc()
	problem.Write(w, p)
}

// sameBearer reports in constant time whether r's bearer token is tok.
func sameBearer(r *http.Request, tok string) bool {
	scheme, bearer, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(bearer)), []byte(tok)) == 1
}

// loggedClientID is the log field of a client id a client sent. Client ids
// are UUIDs; anything else may be a secret sent in the wrong member, and is
// logged as "invalid".
func loggedClientID(id string) zap.Field {
	if !contract.IsUUID(id) {
		id = "invalid"
	}
	return zap.String("client_id", id)
}
