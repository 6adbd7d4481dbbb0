package identity

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/health-data-connect/hdc/backend/store"
)

// ErrRevokedCaller: a token's client is gone or disabled, the sharing
// grant it acts through is revoked or is not for its workspace, or its
// login is revoked.
var ErrRevokedCaller = errors.New("the token's client is disabled, its sharing grant or its login is revoked")

// CheckCaller returns ErrRevokedCaller unless clientID exists and is
// active and may act in workspaceID: its own workspace when grantID is
// empty, else the workspace of grantID, a grant to clientID that is in
// force.
func (s *Service) CheckCaller(ctx context.Context, clientID, workspaceID, grantID string) error {
	c, err := s.activeClient(ctx, clientID)
	if err != nil {
		return revoked(err)
	}
	if grantID == "" {
		if c.WorkspaceID != workspaceID {
			return ErrRevokedCaller
		}
		return nil
	}
	g, err := s.grantInForce(ctx, grantID, clientID)
	switch {
	case err != nil:
		return revoked(err)
	case g.WorkspaceID != workspaceID:
		return ErrRevokedCaller
	}
	return nil
}

// revoked is ErrRevokedCaller for a refused client or grant, and err
// itself for a failure of the store.
func revoked(err error) error {
	if errors.Is(err, ErrInvalidClient) || errors.Is(err, ErrInvalidSharingKey) {
		return ErrRevokedCaller
	}
	return err
}

// Logins finds the logins (refresh token families) access tokens name.
type Logins interface {
	// RefreshFamily returns the family id, store.ErrNotFound if none.
	RefreshFamily(ctx context.Context, id string) (store.RefreshFamily, error)
}

// CheckLogin returns ErrRevokedCaller unless sessionID, when not empty, is
// a live login of clientID: a refresh token presented again revokes its
// login, and with it every access token issued for it.
func CheckLogin(ctx context.Context, logins Logins, clientID, sessionID string) error {
	if sessionID == "" {
		return nil // a token issued before logins were named
	}
	f, err := logins.RefreshFamily(ctx, sessionID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ErrRevokedCaller
	case err != nil:
		return err
	case f.ClientID != clientID || !f.RevokedAt.IsZero():
		return ErrRevokedCaller
	}
	return nil
}

// Caller is who an access token says calls: the client, the workspace it
// acts in, the sharing grant that opened it and the login, the last two
// possibly empty.
type Caller struct{ Client, Workspace, Grant, Session string }

// Callers checks callers (CheckCaller and CheckLogin) and remembers each
// answer for a short while, so that a busy client costs the store one
// lookup per while, and disabling a client, revoking a grant or a login
// takes effect within it on every process.
type Callers struct {
	svc    *Service
	logins Logins
	cache  *expirable.LRU[Caller, error]
}

// NewCallers returns Callers over s and logins remembering up to size
// answers for ttl each.
func NewCallers(s *Service, logins Logins, size int, ttl time.Duration) *Callers {
	return &Callers{svc: s, logins: logins, cache: expirable.NewLRU[Caller, error](size, nil, ttl)}
}

// Check checks c, answered from memory when it was asked within the ttl.
// A failure of the store is not remembered.
func (cs *Callers) Check(ctx context.Context, c Caller) error {
	if err, ok := cs.cache.Get(c); ok {
		return err
	}
	err := cs.svc.CheckCaller(ctx, c.Client, c.Workspace, c.Grant)
	if err == nil {
		err = CheckLogin(ctx, cs.logins, c.Client, c.Session)
	}
	if err == nil || errors.Is(err, ErrRevokedCaller) {
		cs.cache.Add(c, err)
	}
	return err
}
