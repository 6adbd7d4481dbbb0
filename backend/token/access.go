package token

import (
	"errors"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
)

// Access is a signed access token.
type Access struct {
	// Token is the compact JWT.
	Token string
	// ExpiresIn is its lifetime.
	ExpiresIn time.Duration
}

// claims are the members beyond the registered ones.
type claims struct {
	// Workspace is the workspace the token acts in.
	Workspace string `json:"ws"`
	// Grant is the sharing grant that opened Workspace, when the login
	// used one: the backend checks it is still in force on every request.
	Grant string `json:"grant,omitempty"`
	// Session is the login (refresh token family) the token was issued
	// for: the backend refuses the token on every request once the login
	// is revoked. The name is OpenID Connect's session id.
	Session string `json:"sid,omitempty"`
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
	std := jwt.Claims{
		Issuer:    i.cfg.Issuer,
		Audience:  jwt.Audience{i.cfg.Audience},
		Subject:   clientID,
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(now.Add(i.cfg.AccessTTL)),
		ID:        uuid.NewString(),
	}
	tok, err := jwt.Signed(key.signer).Claims(std).Claims(claims{Workspace: workspaceID, Grant: grantID, Session: sessionID}).Serialize()
	if err != nil {
		return Access{}, err
	}
	return Access{Token: tok, ExpiresIn: i.cfg.AccessTTL}, nil
}
