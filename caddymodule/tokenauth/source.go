package tokenauth

import (
	"context"
	"crypto/ed25519"
)

// A KeySource provides the public keys that tokens are verified with.
// RemoteKeySource and FileKeySource are the two this package offers.
type KeySource interface {
	// Key returns the Ed25519 public key named kid. When the source knows no
	// such key it returns an error that wraps ErrUnknownKey; when it has no
	// key set at all (the first fetch failed, say) one that wraps
	// ErrKeysUnavailable. The Verifier calls Key for every token, cached or
	// not, so that a key removed from the set stops being accepted; it
	// should answer from memory whenever it can.
	Key(ctx context.Context, kid string) (ed25519.PublicKey, error)
}
