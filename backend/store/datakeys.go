package store

import (
	"context"
	"time"
)

// DataKeys is where the store keeps its data key, wrapped by the keeper,
// and what package sealed needs to seal the secrets of an earlier version
// in place: every secret the store holds goes through it.
type DataKeys interface {
	// DataKey returns the store's data key, wrapped, or ErrNotFound.
	DataKey(ctx context.Context) (WrappedKey, error)
	// AddDataKey stores k as the store's data key, or returns ErrConflict
	// when the store has one (another process made it first).
	AddDataKey(ctx context.Context, k WrappedKey) error
	// RewrapDataKey replaces the wrapped form of the data key next.ID
	// with next's where it is still old, or returns ErrConflict.
	RewrapDataKey(ctx context.Context, old []byte, next WrappedKey) error
	// Secrets returns every secret the store holds, as stored: sealed, or
	// plain when an earlier version stored it.
	Secrets(ctx context.Context) ([]StoredSecret, error)
	// ReplaceSecret stores next in s's place where the value is still
	// s.Value, or returns ErrConflict.
	ReplaceSecret(ctx context.Context, s StoredSecret, next string) error
	// KeylessSubscriptions returns the ids of the subscriptions stored
	// without a signing key, which versions before every delivery was
	// signed made.
	KeylessSubscriptions(ctx context.Context) ([]string, error)
	// FillSigningKey stores key, sealed, as subscription id's signing key
	// where it has none, or returns ErrConflict (it has one: another
	// process gave it one first; or it is gone).
	FillSigningKey(ctx context.Context, id, key string) error
	// Compact removes from the store's files what replaced values left
	// there: SQLite's free pages are zeroed as they are freed, and Compact
	// empties the write-ahead log and rebuilds the file. PostgreSQL keeps
	// no replaced value in a live row; its Compact does nothing.
	Compact(ctx context.Context) error
}

// WrappedKey is a data key as the store keeps it: wrapped by the keeper.
type WrappedKey struct {
	ID      string
	Wrapped []byte
	// Keeper is the ID of the keeper that wrapped it (keeper.Keeper.ID).
	Keeper    string
	CreatedAt time.Time
}

// SecretKind names where a secret is stored.
type SecretKind string

// The kinds of secret the store holds.
const (
	// SecretSigningKey is an access token signing key's seed (SigningKey).
	SecretSigningKey SecretKind = "signing_key"
	// SecretHashKey is the key of a keyed hash (Identities.HashKey).
	SecretHashKey SecretKind = "hash_key"
	// SecretWebhookKey is a subscription's signing key (Subscription).
	SecretWebhookKey SecretKind = "webhook_signing_key"
	// SecretClientKey is a client's shared encryption key (ClientKey).
	// No version stored one in the clear, so it has no SecretColumns
	// entry: Secrets does not read the key plane, however large.
	SecretClientKey SecretKind = "client_key"
	// SecretIdempotentAnswer is the body of an answer kept for an
	// Idempotency-Key (Idempotent), which may hold a secret shown once;
	// never stored in the clear either.
	SecretIdempotentAnswer SecretKind = "idempotent_answer"
)

// SecretColumn is where a kind of secret is stored: its table, the
// column of its row's id, the column of its value, and whether the value
// is bytes (a seed, a key; else text).
type SecretColumn struct {
	Table, ID, Value string
	Bytes            bool
}

// SecretColumns are the places of every kind of secret, for the engines'
// Secrets and ReplaceSecret.
var SecretColumns = map[SecretKind]SecretColumn{
	SecretSigningKey: {"signing_keys", "id", "seed", true},
	SecretHashKey:    {"hash_keys", "name", "secret", true},
	SecretWebhookKey: {"subscriptions", "id", "signing_key", false},
}

// StoredSecret is a secret in its place: its kind and the id of its row
// (a signing key's id, a hash key's name, a subscription's id).
type StoredSecret struct {
	Kind  SecretKind
	ID    string
	Value string
}
