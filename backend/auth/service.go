// Package auth serves login and refresh: it exchanges client credentials
// (and optionally a sharing key) for a token pair, and rotates refresh
// tokens, revoking a whole login when a rotated token comes back.
//
// Refresh tokens are opaque 256-bit random strings the store knows only by
// their SHA-256. Each login starts a family; every refresh consumes the
// presented token and issues the next one in the family.
//
// Service decides; Handler decodes requests, calls it and encodes answers.
package auth

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/credential"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/token"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// refreshTokenPrefix marks refresh tokens.
const refreshTokenPrefix = "hdc_rt_"

// maxSecretLen bounds the secrets a login may present: longer ones cannot be
// ours, and hashing them would only cost time.
const maxSecretLen = 512

// Errors of the service; their messages are safe to show to a client.
var (
	// ErrInvalidClient: unknown client, wrong secret or disabled client.
	ErrInvalidClient = identity.ErrInvalidClient
	// ErrBusy: the verification of a secret an earlier version stored
	// could not start within its bounded wait; nothing was decided.
	ErrBusy = identity.ErrBusy
	// ErrInvalidSharingKey: unknown or revoked sharing key, or one granted
	// to another client.
	ErrInvalidSharingKey = identity.ErrInvalidSharingKey
	// ErrInvalidRefreshToken: unknown, expired or revoked refresh token, or
	// one of another client.
	ErrInvalidRefreshToken = errors.New("the refresh token is not valid")
	// ErrRefreshTokenReused: a rotated refresh token came back; its whole
	// login is revoked. Clients are told ErrInvalidRefreshToken.
	ErrRefreshTokenReused = errors.New("the refresh token was rotated before; its login is revoked")
)

// ThrottledError refuses a login attempt over its limit.
type ThrottledError struct {
	// Wait is how long until the next attempt is allowed.
	Wait time.Duration
}

func (e *ThrottledError) Error() string { return "too many failed logins; retry later" }

// Config configures a Service and its Handler.
type Config struct {
	Identity *identity.Service
	Issuer   *token.Issuer
	Tokens   store.Tokens
	// Audit keeps the trail of refused logins (successful logins and
	// refreshes are recorded by Tokens, with the change), and Clients
	// tells the workspace of a known client whose login was refused.
	Audit   store.AuditAppender
	Clients store.Identities
	// RefreshTTL is the lifetime of each refresh token.
	RefreshTTL time.Duration
	// ByClient and ByAddress throttle login attempts per client id from
	// one source address, and per source address.
	ByClient  Limiter
	ByAddress Limiter
	Log       *zap.Logger
	// Metrics receives the handler's metrics.
	Metrics prometheus.Registerer
}

// TokenPair is the answer of login and refresh.
type TokenPair struct {
	AccessToken      string `json:"access_token"`
	ExpiresIn        int64  `json:"expires_in"`
	RefreshExpiresIn int64  `json:"refresh_expires_in"`
	RefreshToken     string `json:"refresh_token"`
}

// Service decides logins and refreshes.
type Service struct {
	cfg Config
	now func() time.Time
}

// NewService returns a Service.
func NewService(cfg Config) *Service { return &Service{cfg: cfg, now: time.Now} }

// Credentials are what a login presents.
type Credentials struct {
	ClientID     string
	ClientSecret string
	// SharingKey, when not empty, asks for the workspace of its grant.
	SharingKey string
	// Source is the address the attempt came from, for throttling.
	Source string
	// Audit is the request's audit event (web.AuditEvent); Login sets the
	// rest.
	Audit audit.Event
}

// Login authenticates c and starts a login (a refresh token family),
// recorded in the audit trail (audit.Login) with it. It returns
// ErrInvalidClient, ErrInvalidSharingKey, ErrBusy or *ThrottledError for a refused
// attempt. A refusal for the credentials is recorded (audit.LoginFailed)
// before Login returns, and Login fails when that record cannot be
// written; a throttled attempt is not recorded (the throttle exists to
// make refused attempts cheap; logs and metrics count them).
func (s *Service) Login(ctx context.Context, c Credentials) (TokenPair, error) {
	release, wait, ok, err := s.take(ctx, c.Source, c.ClientID)
	switch {
	case err != nil:
		return TokenPair{}, err
	case !ok:
		return TokenPair{}, &ThrottledError{Wait: wait}
	}
	p, err := s.authenticate(ctx, c)
	switch {
	case errors.Is(err, ErrInvalidClient), errors.Is(err, ErrInvalidSharingKey):
		telemetry.Logger(ctx, s.cfg.Log).Info("login refused", zap.String("source", c.Source), loggedClientID(c.ClientID), zap.String("reason", err.Error()))
		if aerr := s.auditRefusal(ctx, c); aerr != nil {
			return TokenPair{}, aerr
		}
		return TokenPair{}, err
	case errors.Is(err, ErrBusy):
		release() // nothing was decided: the attempt counts for nothing
		return TokenPair{}, err
	case err != nil:
		return TokenPair{}, err
	}
	release()
	pair, err := s.startFamily(ctx, p, c.Audit)
	if err != nil {
		return TokenPair{}, err
	}
	telemetry.Logger(ctx, s.cfg.Log).Info("login", zap.String("client_id", p.ClientID), zap.String("workspace_id", p.WorkspaceID),
		zap.String("grant_id", p.GrantID))
	return pair, nil
}

func (s *Service) authenticate(ctx context.Context, c Credentials) (identity.Principal, error) {
	if len(c.ClientSecret) > maxSecretLen || len(c.SharingKey) > maxSecretLen {
		// Still do the work a real attempt does, so length tells nothing.
		_, _ = s.cfg.Identity.Authenticate(ctx, "", "", "")
		return identity.Principal{}, ErrInvalidClient
	}
	return s.cfg.Identity.Authenticate(ctx, c.ClientID, c.ClientSecret, c.SharingKey)
}

// auditRefusal records the refused login of c: in the trail of the
// client's workspace when the client id is a known client's, else in the
// installation's trail, without a client. Nothing of the credentials but
// a known client's id is recorded.
func (s *Service) auditRefusal(ctx context.Context, c Credentials) error {
	e := c.Audit
	e.At, e.Action, e.Outcome = s.now(), audit.LoginFailed, audit.Denied
	e.Workspace, e.Client, e.Grant, e.Entity = "", "", "", audit.Entity{}
	if contract.IsUUID(c.ClientID) {
		cl, err := s.cfg.Clients.GetClient(ctx, c.ClientID)
		switch {
		case err == nil:
			e.Workspace, e.Client = cl.WorkspaceID, cl.ID
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	_, err := s.cfg.Audit.AppendAudit(ctx, e)
	return err
}

// startFamily records a new login, with its audit record (e, the
// request's), and issues its first token pair.
func (s *Service) startFamily(ctx context.Context, p identity.Principal, e audit.Event) (TokenPair, error) {
	now := s.now()
	e.At, e.Action, e.Outcome = now, audit.Login, audit.Success
	e.Workspace, e.Client, e.Grant = p.WorkspaceID, p.ClientID, p.GrantID
	refresh := credential.NewToken(refreshTokenPrefix)
	f := store.RefreshFamily{
		ID:          uuid.NewString(),
		ClientID:    p.ClientID,
		WorkspaceID: p.WorkspaceID,
		GrantID:     p.GrantID,
		CreatedAt:   now,
	}
	if err := s.cfg.Tokens.CreateRefreshFamily(ctx, f, s.refreshToken(refresh, now), e); err != nil {
		return TokenPair{}, err
	}
	return s.pair(p, f.ID, refresh)
}

func (s *Service) refreshToken(tok string, now time.Time) store.RefreshToken {
	return store.RefreshToken{Hash: credential.TokenHash(tok), CreatedAt: now, ExpiresAt: now.Add(s.cfg.RefreshTTL)}
}

// pair issues the token pair of login (a refresh family) for p: an access
// token naming the login, and refresh.
func (s *Service) pair(p identity.Principal, login, refresh string) (TokenPair, error) {
	acc, err := s.cfg.Issuer.Issue(p.ClientID, p.WorkspaceID, p.GrantID, login)
	if err != nil {
		return TokenPair{}, err
	}
	return TokenPair{
		AccessToken:      acc.Token,
		ExpiresIn:        int64(acc.ExpiresIn / time.Second),
		RefreshExpiresIn: int64(s.cfg.RefreshTTL / time.Second),
		RefreshToken:     refresh,
	}, nil
}

// Refresh rotates the refresh token of clientID's login and returns the
// next pair. e is the request's audit event (web.AuditEvent): the
// rotation records it (audit.Refresh), or the revocation for reuse
// (audit.RefreshReuse), in its transaction. It returns ErrInvalidClient for a client that is gone or
// disabled, ErrInvalidSharingKey when the login's sharing grant was revoked
// (which revokes the login), ErrInvalidRefreshToken, or
// ErrRefreshTokenReused (the login is revoked).
//
// Everything that can fail is checked before the token is consumed, so that
// a client whose refresh failed on the server's side can retry with the same
// token instead of being taken for a thief.
func (s *Service) Refresh(ctx context.Context, clientID, refreshToken string, e audit.Event) (TokenPair, error) {
	if err := s.cfg.Identity.CheckClient(ctx, clientID); err != nil {
		return TokenPair{}, err
	}
	now := s.now()
	hash := credential.TokenHash(refreshToken)
	f, err := s.cfg.Tokens.RefreshFamilyOf(ctx, clientID, hash)
	if errors.Is(err, store.ErrNotFound) {
		return TokenPair{}, ErrInvalidRefreshToken
	}
	if err != nil {
		return TokenPair{}, err
	}
	if err := s.checkGrant(ctx, f, now); err != nil {
		return TokenPair{}, err
	}
	next := credential.NewToken(refreshTokenPrefix)
	pair, err := s.pair(identity.Principal{ClientID: clientID, WorkspaceID: f.WorkspaceID, GrantID: f.GrantID}, f.ID, next)
	if err != nil {
		return TokenPair{}, err
	}
	// The rotation decides: a token that is expired, consumed or of a
	// revoked family is refused here, atomically.
	e.At, e.Client = now, clientID
	_, err = s.cfg.Tokens.RotateRefreshToken(ctx, clientID, hash, s.refreshToken(next, now), now, e)
	switch {
	case errors.Is(err, store.ErrTokenReused):
		telemetry.Logger(ctx, s.cfg.Log).Warn("rotated refresh token presented again; its family is revoked", zap.String("client_id", clientID))
		return TokenPair{}, ErrRefreshTokenReused
	case errors.Is(err, store.ErrNotFound):
		return TokenPair{}, ErrInvalidRefreshToken
	case err != nil:
		return TokenPair{}, err
	}
	return pair, nil
}

// RefreshWithToken rotates a refresh token presented without an access
// token: the token names its client. A non-empty clientID (the client the
// request says it is) must be that client, else the token is not valid for
// it. It then decides as Refresh does, with the same rotation: a token
// rotated by either is reuse for the other.
func (s *Service) RefreshWithToken(ctx context.Context, refreshToken, clientID string, e audit.Event) (TokenPair, error) {
	owner, err := s.cfg.Tokens.RefreshTokenClient(ctx, credential.TokenHash(refreshToken))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return TokenPair{}, ErrInvalidRefreshToken
	case err != nil:
		return TokenPair{}, err
	case clientID != "" && clientID != owner:
		return TokenPair{}, ErrInvalidRefreshToken
	}
	return s.Refresh(ctx, owner, refreshToken, e)
}

// checkGrant refuses the refresh of a live login made with a sharing grant
// that is no longer in force, and then revokes the login for good.
func (s *Service) checkGrant(ctx context.Context, f store.RefreshFamily, now time.Time) error {
	if f.GrantID == "" || !f.RevokedAt.IsZero() {
		return nil
	}
	err := s.cfg.Identity.CheckGrant(ctx, f.GrantID, f.ClientID)
	if errors.Is(err, ErrInvalidSharingKey) {
		if rerr := s.cfg.Tokens.RevokeRefreshFamily(ctx, f.ID, now); rerr != nil {
			telemetry.Logger(ctx, s.cfg.Log).Error("revoking a refresh family failed", zap.Error(rerr))
		}
	}
	return err
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
