package tokenauth

import "fmt"

// Error is a reason for refusing a token. The package returns only the values
// below, either as they are or wrapped with a detail (use [errors.Is] to test
// for one and [errors.As] to get its Reason).
type Error struct {
	// Reason is a short, stable, lower-case identifier such as "expired",
	// suitable as a metric label or as part of a problem code.
	Reason string
}

func (e *Error) Error() string { return "tokenauth: " + e.Reason }

// The reasons a token is refused. All of them are the client's doing (the
// edge answers 401) except ErrKeysUnavailable, which is ours (503).
var (
	// ErrMissing: there is no token (an empty Authorization header or an
	// empty token).
	ErrMissing = &Error{Reason: "missing"}
	// ErrMalformed: the token or the Authorization header is not well formed:
	// too long, not three base64url segments, not JSON, no kid, a claim of
	// the wrong type.
	ErrMalformed = &Error{Reason: "malformed"}
	// ErrBadSignature: the signature does not verify, or the token is signed
	// with another algorithm than EdDSA (including "none").
	ErrBadSignature = &Error{Reason: "bad_signature"}
	// ErrUnknownKey: the kid is not in the key set, even after a refetch.
	ErrUnknownKey = &Error{Reason: "unknown_key"}
	// ErrExpired: exp has passed (beyond the leeway), or, for ModeRefresh,
	// passed longer ago than the refresh grace.
	ErrExpired = &Error{Reason: "expired"}
	// ErrNotYetValid: nbf or iat lies in the future (beyond the leeway).
	ErrNotYetValid = &Error{Reason: "not_yet_valid"}
	// ErrClaims: wrong issuer or audience, or a required claim (iss, aud,
	// sub, ws, jti, exp) is missing or empty.
	ErrClaims = &Error{Reason: "invalid_claims"}
	// ErrKeysUnavailable: the key set could not be obtained and there is no
	// earlier one to fall back on. It is a server-side failure, not the
	// client's.
	ErrKeysUnavailable = &Error{Reason: "keys_unavailable"}
)

// detail wraps a reason with a human-readable detail. The detail is written
// by this package and never quotes the token or a claim value.
func detail(reason *Error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{reason}, args...)...)
}
