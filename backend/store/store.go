// Package store defines the backend's persistence: one interface that every
// database engine implements (SQLite, and PostgreSQL for replicas sharing
// one database) and the records it keeps. The conformance suite in package
// storetest pins the behaviour an implementation must show; an engine is
// finished when that suite passes.
//
// Every method that looks tenant data up by an identifier a client supplied
// takes the workspace id too and treats a row of another workspace exactly
// like a missing row (ErrNotFound), so a handler cannot leak another tenant's
// data by forgetting a check.
//
// Times are stored with microsecond precision in UTC.
package store

import (
	"context"
	"errors"
	"time"
)

// Errors an implementation returns; callers test them with errors.Is.
var (
	// ErrNotFound: no such row, or a row of another tenant or client.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a unique key (id, endpoint, key generation) is taken.
	ErrConflict = errors.New("store: conflict")
	// ErrTokenReused: a refresh token that was already rotated was presented
	// again; the implementation has revoked its whole family.
	ErrTokenReused = errors.New("store: refresh token reused")
	// ErrLimit: the workspace already has as many rows of the kind as the
	// caller allows.
	ErrLimit = errors.New("store: limit reached")
	// ErrLeaseLost: the delivery is no longer pending under the caller's
	// lease (it expired and another worker claimed it, it was finished, or
	// its subscription was disabled or deleted).
	ErrLeaseLost = errors.New("store: delivery lease lost")
)

// Store is the backend's persistence: every role, as one engine
// (SQLite, PostgreSQL) implements them. Implementations are safe for
// concurrent use by several goroutines and by several processes sharing the
// database. A package that needs one role takes that role, not Store.
type Store interface {
	Identities
	Tokens
	SigningKeys
	Records
	Subscriptions
	WebhookDestinations
	Outbox
	DeliveryLog
	Throttle
	Audit
	DataKeys
	ClientKeys
	ClientLimits
	Replays
	Revocations
	People
	Idempotency
	Fleet

	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	// PoolStats describes the pool of connections to the database.
	PoolStats() PoolStats
	// Close releases the database.
	Close() error
}

// PoolStats describes a store's pool of database connections, for
// metrics.
type PoolStats struct {
	// Max is the most connections the pool opens; 0 for no bound.
	Max int
	// InUse and Idle are the connections open: serving a caller, or not.
	InUse, Idle int
	// Waits counts the callers that waited for a connection to be free or
	// made; WaitTime is how long they waited, in all.
	Waits    int64
	WaitTime time.Duration
}
