package token

import (
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Access is a signed access token.
type Access struct {
	// Token is the compact JWT.
	Token string
	// ExpiresIn is its lifetime.
	ExpiresIn time.Duration
}

// claims are what an access token carries: the registered claims, and the
// backend's own, named in internal/contract. golang-jwt signs them here and
// verifies them at the edge (caddymodule/tokenauth), with the same struct
// shape; go-jose only publishes the public keys, as a JWKS.
type claims struct {
	jwt.RegisteredClaims
	contract.TokenClaims
}

// Issue signs an access token for clientID acting in workspaceID, through
// the sharing grant grantID when it is not empty, for the login sessionID.
func (i *Issuer) Issue(clientID, workspaceID, grantID, sessionID string) (Access, error) {
	i.mu.RLock()
	key := i.current
	i.mu.RUnlock()
	if key == nil {
		return Access{}, errors.New("token: no signing key")
	}
	now := i.now()
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    i.cfg.Issuer,
			Audience:  jwt.ClaimStrings{i.cfg.Audience},
			Subject:   clientID,
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(i.cfg.AccessTTL)),
			ID:        uuid.NewString(),
		},
		TokenClaims: contract.TokenClaims{Workspace: workspaceID, Grant: grantID, Session: sessionID},
	})
	tok.Header["kid"] = key.id
	signed, err := tok.SignedString(key.private)
	if err != nil {
		return Access{}, err
	}
	return Access{Token: signed, ExpiresIn: i.cfg.AccessTTL}, nil
}
