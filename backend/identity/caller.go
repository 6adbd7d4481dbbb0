package identity

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
)

// ErrRevokedCaller: a token's client is gone or disabled, or the sharing
// grant it acts through is revoked or is not for its workspace.
var ErrRevokedCaller = errors.New("the token's client is disabled, or its sharing grant is revoked")

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

// Callers checks callers (CheckCaller) and remembers each answer for a
// short while, so that a busy client costs the store one lookup per
// while, and disabling a client or revoking a grant takes effect within
// it on every process.
type Callers struct {
	svc   *Service
	cache *expirable.LRU[caller, error]
}

type caller struct{ client, workspace, grant string }

// NewCallers returns Callers over s remembering up to size answers for
// ttl each.
func NewCallers(s *Service, size int, ttl time.Duration) *Callers {
	return &Callers{svc: s, cache: expirable.NewLRU[caller, error](size, nil, ttl)}
}

// Check is CheckCaller, answered from memory when it was asked within the
// ttl. A failure of the store is not remembered.
func (c *Callers) Check(ctx context.Context, clientID, workspaceID, grantID string) error {
	k := caller{clientID, workspaceID, grantID}
	if err, ok := c.cache.Get(k); ok {
		return err
	}
	err := c.svc.CheckCaller(ctx, clientID, workspaceID, grantID)
	if err == nil || errors.Is(err, ErrRevokedCaller) {
		c.cache.Add(k, err)
	}
	return err
}
