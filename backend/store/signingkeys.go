package store

import (
	"context"
	"time"
)

// SigningKeys are the keys that sign access tokens (package token).
type SigningKeys interface {
	// ListSigningKeys returns every signing key, oldest generation first.
	ListSigningKeys(ctx context.Context) ([]SigningKey, error)
	// AddSigningKey stores k. Generations are unique: when another replica
	// already added a key of k.Generation, it returns ErrConflict, which is
	// how two replicas rotating at once end up adding a single key.
	AddSigningKey(ctx context.Context, k SigningKey) error
	// DeleteSigningKey removes the key; deleting a missing key is no error.
	DeleteSigningKey(ctx context.Context, id string) error
}

// SigningKey is an Ed25519 key that signs access tokens.
type SigningKey struct {
	ID string
	// Generation orders keys: a rotation adds the latest generation plus one.
	Generation int64
	// Seed is the Ed25519 private key seed (ed25519.SeedSize bytes).
	Seed      []byte
	CreatedAt time.Time
}
