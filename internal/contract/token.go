package contract

// TokenClaims are the claims of an access token beyond the registered
// ones (RFC 7519): the backend signs them (package backend/token), the edge
// verifies them and forwards them in the identity headers (package
// caddymodule/tokenauth). Each side embeds this struct in its JWT
// library's claims, so that the names are declared once.
type TokenClaims struct {
	// Workspace (ws) is the workspace the token acts in: its client's own,
	// or another one through a sharing grant. Required.
	Workspace string `json:"ws"`
	// Grant (grant) is the sharing grant that opened Workspace; absent for
	// a client in its own workspace.
	Grant string `json:"grant,omitempty"`
	// Session (sid, OpenID Connect's session id) is the login (refresh
	// token family) the token was issued for; absent from tokens issued
	// before logins were named.
	Session string `json:"sid,omitempty"`
}

// ClaimWorkspace is the name of TokenClaims.Workspace, which a verifier
// names when it is missing.
const ClaimWorkspace = "ws"
