package contract

// HeaderPrefix starts the name of every header of the edge–backend hop, in
// the canonical form net/http keys header maps with. The edge removes every
// header with this prefix that a client sent.
const HeaderPrefix = "X-Hdc-"

// Identity headers the edge sets after verifying a bearer token.
const (
	// HeaderClientID is the token's subject: the calling client.
	HeaderClientID = HeaderPrefix + "Client-Id"
	// HeaderWorkspaceID is the token's ws claim: the workspace the client
	// acts in (its own, or another one through a sharing grant).
	HeaderWorkspaceID = HeaderPrefix + "Workspace-Id"
	// HeaderTokenID is the token's jti.
	HeaderTokenID = HeaderPrefix + "Token-Id"
	// HeaderGrantID is the token's grant claim: the sharing grant that
	// opened the workspace; absent for a client in its own workspace.
	HeaderGrantID = HeaderPrefix + "Grant-Id"
	// HeaderSessionID is the token's sid claim: the login (refresh token
	// family) it was issued for; absent for a token issued before logins
	// were named.
	HeaderSessionID = HeaderPrefix + "Session-Id"
	// HeaderKeyID is the kid of the key an encrypted request was opened
	// with; absent on a plain request.
	HeaderKeyID = HeaderPrefix + "Key-Id"
	// HeaderKeyClientID is the client the key of an encrypted request
	// belongs to; absent on a plain request. Where no bearer token names
	// the caller, the backend binds the key to the credential in the body
	// with it.
	HeaderKeyClientID = HeaderPrefix + "Key-Client-Id"
	// HeaderClientIP is the address of the client as the edge saw it,
	// behind the proxies it trusts; on every route.
	HeaderClientIP = HeaderPrefix + "Client-Ip"
	// HeaderRequestID is the id (a UUID) the edge gave the request, which
	// its access log line carries as "uuid" and the backend's as
	// "request_id"; on every route.
	HeaderRequestID = HeaderPrefix + "Request-Id"
	// HeaderJTI is the jti of an opened envelope that named one (its iat
	// checked by the edge), which the backend records under the request's
	// kid (HeaderKeyID) to refuse a replay through any edge.
	HeaderJTI = HeaderPrefix + "Jti"
	// HeaderJTIExpires is when the backend may forget HeaderJTI, in
	// seconds since the Unix epoch: the envelope's iat plus the freshness
	// window, after which the edges refuse it as stale.
	HeaderJTIExpires = HeaderPrefix + "Jti-Expires"
)

// HeaderRequestIDAnswer names the request's id in every answer of the
// edge, for a client to quote.
const HeaderRequestIDAnswer = "X-Request-Id"

// Headers of the encrypted transport, as clients send and receive them.
const (
	// HeaderEncryption opts a request into the encrypted transport and
	// marks an encrypted answer; its one value is EncryptionJWE.
	HeaderEncryption = "X-Encryption"
	// HeaderEncryptionKid names the key of the answer to a request without
	// a body (which has no envelope to name it).
	HeaderEncryptionKid = "X-Encryption-Kid"
	// EncryptionJWE is the value of HeaderEncryption.
	EncryptionJWE = "JWE"
)
