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

	"github.com/health-data-connect/hdc/backend/audit"
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
	Outbox
	Throttle
	Audit

	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error
}

// Identities are workspaces, their clients and sharing grants (package identity).
type Identities interface {
	// EnsureWorkspace creates the workspace unless it exists and reports
	// whether it created it.
	EnsureWorkspace(ctx context.Context, id string, now time.Time) (created bool, err error)
	// GetWorkspace returns the workspace or ErrNotFound.
	GetWorkspace(ctx context.Context, id string) (Workspace, error)
	// CreateClient stores c and appends e, its audit event
	// (audit.ClientCreate), in the same transaction; ErrNotFound when its
	// workspace does not exist, ErrConflict when the id is taken, the
	// append's error (and nothing stored) when e cannot be recorded.
	CreateClient(ctx context.Context, c Client, e audit.Event) error
	// GetClient returns the client or ErrNotFound.
	GetClient(ctx context.Context, id string) (Client, error)
	// ListClients returns every client ordered by creation time, then id.
	ListClients(ctx context.Context) ([]Client, error)
	// SetClientStatus changes the client's status and appends e, its
	// audit event (audit.ClientDisable), in the same transaction, or
	// returns ErrNotFound and appends nothing.
	SetClientStatus(ctx context.Context, id string, status ClientStatus, e audit.Event) error
	// CreateSharingGrant stores g and appends e (audit.SharingGrant) in the
	// same transaction; ErrNotFound when its workspace or client does not
	// exist, ErrConflict when the id or key hash is taken.
	CreateSharingGrant(ctx context.Context, g SharingGrant, e audit.Event) error
	// GetSharingGrantByKeyHash returns the grant whose key hashes to keyHash,
	// revoked or not, or ErrNotFound.
	GetSharingGrantByKeyHash(ctx context.Context, keyHash []byte) (SharingGrant, error)
	// GetSharingGrant returns the grant with this id or ErrNotFound.
	GetSharingGrant(ctx context.Context, id string) (SharingGrant, error)
	// ListSharingGrants returns every grant ordered by creation time, then id.
	ListSharingGrants(ctx context.Context) ([]SharingGrant, error)
	// RevokeSharingGrant marks the grant revoked at now and appends e
	// (audit.SharingRevoke) in the same transaction. Revoking a revoked
	// grant keeps the first revocation time (and is recorded again).
	// ErrNotFound, and nothing appended, for an unknown id.
	RevokeSharingGrant(ctx context.Context, id string, now time.Time, e audit.Event) error
	// ReplaceSecretHash sets the client's secret hash to next where it is
	// still old: the move of a client's secret to another hash at its
	// login. A client whose hash is no longer old (another process moved
	// it first) or that does not exist is left as it is, without error.
	ReplaceSecretHash(ctx context.Context, clientID, old, next string) error
	// HashKey returns the key of the keyed hash named name, storing fresh
	// as that key at now when there is none yet; processes that ask at
	// once all get the one key stored.
	HashKey(ctx context.Context, name string, fresh []byte, now time.Time) ([]byte, error)
}

// Tokens are the refresh token families of logins (package auth).
type Tokens interface {
	// CreateRefreshFamily starts a token family (one login) with its first token.
	// It appends e (the login) to the audit trail in the same transaction:
	// nothing is stored when the append fails.
	CreateRefreshFamily(ctx context.Context, f RefreshFamily, first RefreshToken, e audit.Event) error
	// RefreshFamilyOf returns the family of the refresh token hashing to
	// hash, whatever the state of the token and of the family, and changes
	// nothing: a caller checks what the family depends on before
	// RotateRefreshToken consumes the token. ErrNotFound for an unknown
	// token or one of another client than clientID.
	RefreshFamilyOf(ctx context.Context, clientID string, hash []byte) (RefreshFamily, error)
	// RefreshFamily returns the family (login) id, whatever its state:
	// the per-request check of an access token, which names its login,
	// refuses one of a revoked family. ErrNotFound for an unknown id.
	RefreshFamily(ctx context.Context, id string) (RefreshFamily, error)
	// RefreshTokenClient returns the client of the refresh token hashing to
	// hash, whatever the state of the token and of its family: for the
	// route where the token alone names the client. ErrNotFound for an
	// unknown token.
	RefreshTokenClient(ctx context.Context, hash []byte) (string, error)
	// RotateRefreshToken consumes the refresh token hashing to hash, which
	// must belong to clientID, be unexpired, unused and of a live family, and
	// stores next (whose FamilyID the implementation sets) in the same family,
	// atomically. It returns the family.
	//
	// A token that is unknown, expired, of another client or of a revoked
	// family gives ErrNotFound and changes nothing. A token of clientID that
	// was already consumed revokes the family and gives ErrTokenReused.
	//
	// e is the request's audit event (see Rotate): a rotation appends it as
	// audit.Refresh, a revocation for reuse as audit.RefreshReuse, in the
	// transaction that decides.
	RotateRefreshToken(ctx context.Context, clientID string, hash []byte, next RefreshToken, now time.Time, e audit.Event) (RefreshFamily, error)
	// RevokeRefreshFamily revokes every token of the family.
	RevokeRefreshFamily(ctx context.Context, familyID string, now time.Time) error
}

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

// Records are uploaded documents and the resources parsers attach (package records).
type Records interface {
	// CreateRecord stores r; ErrNotFound when its workspace does not exist,
	// ErrConflict when its id or care context id is taken.
	// It appends e (the upload) to the audit trail in the same transaction.
	CreateRecord(ctx context.Context, r Record, e audit.Event) error
	// GetRecord returns the workspace's record with this care context id, or
	// ErrNotFound (also when the record belongs to another workspace).
	GetRecord(ctx context.Context, workspaceID, careContextID string) (Record, error)
	// AddRecordResources appends resources to the record with this care
	// context id, with their Aliases, marks it parsed, increments its
	// version and sets its UpdatedAt to now, atomically. It returns the
	// updated record, or ErrNotFound. Resources get Seq numbers after the
	// existing ones. ErrConflict when an alias is already the record's (a
	// record's aliases are unique); nothing is stored then.
	// It appends e (the submission) to the trail of the record's workspace
	// (AuditIn) in the same transaction.
	AddRecordResources(ctx context.Context, careContextID string, resources []Resource, now time.Time, e audit.Event) (Record, error)
	// RecordAliases returns the aliases of the resources of the record
	// with this care context id, each mapped to its resource's ID, or
	// ErrNotFound when there is no such record.
	RecordAliases(ctx context.Context, careContextID string) (map[string]string, error)
	// ListRecordResources returns the resources of a record the caller
	// already read (with GetRecord), in Seq order.
	ListRecordResources(ctx context.Context, recordID string) ([]Resource, error)
}

// Subscriptions are the webhook registrations of workspaces (package webhook).
type Subscriptions interface {
	// CreateSubscription stores s; ErrNotFound when its workspace does not
	// exist, ErrConflict when the workspace already has s.Endpoint, ErrLimit
	// when it already has max subscriptions (max <= 0: no limit). The count
	// and the insert are atomic: concurrent creations never exceed max.
	// It appends e to the audit trail in the same transaction.
	CreateSubscription(ctx context.Context, s Subscription, max int, e audit.Event) error
	// ListSubscriptions returns the workspace's subscriptions ordered by
	// creation time, then id.
	ListSubscriptions(ctx context.Context, workspaceID string) ([]Subscription, error)
	// DeleteSubscription removes the workspace's subscription, with its
	// deliveries, or returns ErrNotFound.
	// It appends e to the audit trail in the same transaction.
	DeleteSubscription(ctx context.Context, workspaceID, id string, e audit.Event) error
}

// Outbox is the webhook outbox (packages webhook and webhook/delivery). An
// event is stored with one delivery per matching subscription in a single
// transaction; delivery workers, in any number of processes sharing the
// database, claim due deliveries under a lease, attempt them and report
// each attempt with FinishAttempt. A worker that dies leaves its claims to
// expire, and they are claimed again.
type Outbox interface {
	// PublishEvent stores e and, in the same transaction, one pending
	// delivery due at e.CreatedAt for every active subscription of
	// e.WorkspaceID that selects e.Type. Delivery ids are generated, random
	// and unique; PublishEvent returns them. ErrNotFound when the workspace
	// does not exist, ErrConflict when e.ID is taken; nothing is stored then.
	PublishEvent(ctx context.Context, e Event) (deliveryIDs []string, err error)
	// ClaimDeliveries leases deliveries as c describes: pending ones due at
	// c.Now and not under an unexpired lease, taken in turns across
	// workspaces (each workspace's earliest due delivery before any
	// workspace's second, and so on), earliest due first within a turn.
	// Two concurrent claims never return the same delivery.
	ClaimDeliveries(ctx context.Context, c Claim) ([]Delivery, error)
	// FinishAttempt records attempt a of a delivery leased to owner and
	// applies next, atomically: the attempt gets the next Number, the
	// delivery's status and due time follow next and its lease ends, and the
	// subscription's LastDeliveryAt and LastDeliveryOutcome become a's
	// start and outcome. With next.DisableSubscription the subscription is
	// disabled, its other pending deliveries are canceled and next.Disabled
	// is appended to the audit trail, in the same transaction. ErrLeaseLost
	// when the delivery is not pending under owner's lease; nothing changes
	// then.
	FinishAttempt(ctx context.Context, owner string, a Attempt, next Next) error
	// ReleaseDelivery ends owner's lease on a delivery without recording an
	// attempt, so that it can be claimed at once (a worker shutting down
	// mid-attempt). ErrLeaseLost as for FinishAttempt.
	ReleaseDelivery(ctx context.Context, owner, deliveryID string) error
	// OutboxStats describes the pending deliveries.
	OutboxStats(ctx context.Context) (OutboxStats, error)
	// PruneOutbox deletes the deliveries that finished before before, with
	// their attempts, and the events created before before that have no
	// delivery left. It returns the number of deliveries deleted.
	PruneOutbox(ctx context.Context, before time.Time) (int64, error)
}

// Claim describes a claim of due deliveries (Outbox.ClaimDeliveries).
type Claim struct {
	// Owner holds the leases; each claim must use an owner no other
	// claim uses.
	Owner string
	// Now is when the claim is made; the leases last until LeaseUntil.
	Now, LeaseUntil time.Time
	// Limit is the most deliveries the claim takes.
	Limit int
	// PerWorkspace, when positive, is the most deliveries of one workspace
	// under an unexpired lease once the claim is made, whoever holds the
	// leases: a workspace at its cap gets none.
	PerWorkspace int
}

// Throttle is login throttling shared by every process on the database
// (package auth). Each key (a client id or a source address) has a token
// bucket of rate.Burst attempts, refilled at rate.Burst per rate.Per, kept
// as the time at which the bucket will be full again (the generic cell rate
// algorithm); a key never seen has a full bucket.
type Throttle interface {
	// TakeThrottle spends one attempt from key's bucket at now and reports
	// ok; when the bucket is empty it spends nothing and reports how long
	// until the next attempt is allowed. Concurrent takes, in any number of
	// processes, never spend more than the bucket holds.
	TakeThrottle(ctx context.Context, key string, rate Rate, now time.Time) (wait time.Duration, ok bool, err error)
	// ReturnThrottle gives an attempt back to key's bucket, which never
	// holds more than rate.Burst.
	ReturnThrottle(ctx context.Context, key string, rate Rate, now time.Time) error
	// PruneThrottle forgets the keys whose buckets are full at now and
	// returns how many it forgot.
	PruneThrottle(ctx context.Context, now time.Time) (int64, error)
}

// AuditAppender appends events to the audit trail: Audit does, and so does
// what stands before it to decide what reaches it (package auditwindow).
type AuditAppender interface {
	// AppendAudit appends e to its workspace's chain, in a transaction of
	// its own, and returns the record. Appends to one chain from any number
	// of processes take seqs one after the other, without gaps, each record
	// following the one before. An invalid event changes nothing. A change
	// that has an event to record appends it in its own transaction
	// instead (see the function AppendAudit).
	AppendAudit(ctx context.Context, e audit.Event) (audit.Record, error)
}

// Audit is the audit trail (package audit): one hash chain of records per
// workspace, the installation's own under the workspace id "". Engines
// share its decisions (audit.go): AppendAudit, PruneAudit, DecodeAudit.
type Audit interface {
	AuditAppender
	// ListAudit returns the records of f.Workspace's chain that f selects,
	// in seq order. A stored record that does not parse, or that is not
	// what its row's columns say, ends the list: ListAudit returns the
	// records before it and an *audit.Break naming it.
	ListAudit(ctx context.Context, f AuditFilter) ([]audit.Record, error)
	// AuditHeads returns the head of every chain, ordered by workspace id.
	AuditHeads(ctx context.Context) ([]audit.Head, error)
	// PruneAudit removes the longest prefix of the workspace's chain whose
	// records are all older than before, appends an audit.RetentionPrune
	// record at now naming it, and makes it the head's Pruned, atomically;
	// it returns how many records it removed. Removing none appends
	// nothing. A prefix with records missing is not removed: PruneAudit
	// returns an *audit.Break naming the first one.
	PruneAudit(ctx context.Context, workspace string, before, now time.Time) (int64, error)
}

// AuditFilter selects records of a chain (Audit.ListAudit).
type AuditFilter struct {
	// Workspace names the chain; "" is the installation's.
	Workspace string
	// Since and Until bound the records' times: Since <= At < Until, a
	// zero time being no bound.
	Since, Until time.Time
	// Entity, when set, is the id of the entity the records concern.
	Entity string
	// Agent, when set, is the client that acted.
	Agent string
	// After is a cursor: only records with a greater Seq are selected.
	After int64
	// Limit, when positive, is the most records returned.
	Limit int
}

// Workspace is a tenant: records, subscriptions and clients belong to one.
type Workspace struct {
	ID        string
	CreatedAt time.Time
}

// ClientStatus says whether a client may log in and refresh.
type ClientStatus string

// Client statuses.
const (
	ClientActive   ClientStatus = "active"
	ClientDisabled ClientStatus = "disabled"
)

// Client is an API client of one workspace.
type Client struct {
	ID          string
	WorkspaceID string
	// SecretHash is the self-describing encoding of the secret: a keyed
	// hash (credential.MAC), or argon2id for a client not logged in since
	// earlier versions (credential.Hash).
	SecretHash string
	Status     ClientStatus
	CreatedAt  time.Time
}

// SharingGrant lets ClientID act in WorkspaceID (another workspace than its
// own, usually) when it logs in with the grant's sharing key.
type SharingGrant struct {
	ID          string
	WorkspaceID string
	ClientID    string
	// KeyHash is the SHA-256 of the sharing key; the key itself is never stored.
	KeyHash   []byte
	CreatedAt time.Time
	// RevokedAt is zero while the grant is in force.
	RevokedAt time.Time
}

// RefreshFamily is one login: the refresh tokens it rotates through share it,
// and revoking it revokes them all.
type RefreshFamily struct {
	ID          string
	ClientID    string
	WorkspaceID string
	// GrantID is the sharing grant the login used, or empty.
	GrantID   string
	CreatedAt time.Time
	// RevokedAt is zero while the family is live.
	RevokedAt time.Time
}

// RefreshToken is one opaque refresh token, known only by its SHA-256.
type RefreshToken struct {
	Hash      []byte
	FamilyID  string
	CreatedAt time.Time
	ExpiresAt time.Time
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

// RecordStatus is the processing state of a record.
type RecordStatus string

// Record statuses.
const (
	// RecordPending: the file is stored and no parser results arrived yet.
	RecordPending RecordStatus = "pending"
	// RecordParsed: parser results are attached.
	RecordParsed RecordStatus = "parsed"
)

// Record is an uploaded document and what parsers found in it.
type Record struct {
	// ID is the document id returned by the upload.
	ID            string
	CareContextID string
	WorkspaceID   string
	ClientID      string
	// BlobKey is the content address (hex SHA-256) of the file.
	BlobKey string
	// SHA1 is the file's SHA-1, which FHIR's Attachment.hash carries.
	SHA1        []byte
	Size        int64
	ContentType string
	Title       string
	Tasks       []string
	Status      RecordStatus
	// Version counts changes: 1 at upload, plus one per batch of resources.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Resource is one FHIR resource a parser attached to a record.
type Resource struct {
	RecordID string
	Seq      int64
	// ResourceType and ID repeat the resource's members for queries.
	ResourceType string
	ID           string
	// JSON is the resource, already carrying ID.
	JSON []byte
	// Aliases are the references by which the parser's submission named
	// the resource (its entry's fullUrl, "Type/id"), which later
	// submissions for the record may use. AddRecordResources stores them;
	// ListRecordResources does not read them back (RecordAliases does).
	Aliases []string
}

// SubscriptionStatus says whether events are delivered to a subscription.
type SubscriptionStatus string

// Subscription statuses.
const (
	SubscriptionActive   SubscriptionStatus = "active"
	SubscriptionDisabled SubscriptionStatus = "disabled"
)

// Subscription is a webhook registration of one workspace.
type Subscription struct {
	ID          string
	WorkspaceID string
	// Endpoint is the normalised URL, queue URL or function ARN.
	Endpoint string
	// Protocol is one of "http", "https", "sqs", "lambda".
	Protocol string
	// EventNames are the selected events, read back in ascending order.
	EventNames []string
	// SigningKey is the client's secret for signing deliveries, or empty.
	// It is never returned to clients.
	SigningKey string
	Status     SubscriptionStatus
	CreatedAt  time.Time
	// LastDeliveryAt and LastDeliveryOutcome describe the most recent
	// delivery attempt; zero and empty before the first one.
	LastDeliveryAt      time.Time
	LastDeliveryOutcome string
}

// Event is something that happened in a workspace, published to the
// subscriptions that select its type.
type Event struct {
	ID          string
	WorkspaceID string
	// Type is one of the event names of the API (webhook.Events).
	Type string
	// Data is the event's JSON object, delivered as the payload's "data".
	Data      []byte
	CreatedAt time.Time
}

// DeliveryStatus is the state of a delivery.
type DeliveryStatus string

// Delivery statuses. Pending is the only one that changes.
const (
	// DeliveryPending: waiting for its first attempt or a retry.
	DeliveryPending DeliveryStatus = "pending"
	// DeliveryDelivered: an attempt succeeded.
	DeliveryDelivered DeliveryStatus = "delivered"
	// DeliveryFailed: given up (retries exhausted, a permanent error, or
	// the subscription answered that it is gone).
	DeliveryFailed DeliveryStatus = "failed"
	// DeliveryCanceled: its subscription was disabled before it succeeded.
	DeliveryCanceled DeliveryStatus = "canceled"
)

// Delivery is one event on its way to one subscription.
type Delivery struct {
	// ID is random and stable across attempts: the webhook-id derives from it.
	ID    string
	Event Event
	// Subscription is the target; its EventNames are not loaded.
	Subscription Subscription
	Status       DeliveryStatus
	// Attempts counts the finished attempts.
	Attempts      int
	CreatedAt     time.Time
	NextAttemptAt time.Time
	// LeaseOwner and LeaseExpiresAt describe the current or last claim;
	// empty and zero before the first claim and after an attempt.
	LeaseOwner     string
	LeaseExpiresAt time.Time
	// FinishedAt is zero while the delivery is pending.
	FinishedAt time.Time
}

// Attempt is one try at a delivery.
type Attempt struct {
	DeliveryID string
	// Number counts from 1; FinishAttempt assigns it.
	Number    int
	StartedAt time.Time
	Duration  time.Duration
	// Outcome is a short code: "delivered", "http_503", "timeout", … It is
	// shown to the subscriber and must not carry secrets or payloads.
	Outcome string
	// StatusCode is the HTTP status of the answer, 0 when there was none.
	StatusCode int
}

// Next says what becomes of a delivery after an attempt.
type Next struct {
	// Status is DeliveryPending to retry at RetryAt, DeliveryDelivered or
	// DeliveryFailed.
	Status  DeliveryStatus
	RetryAt time.Time
	// DisableSubscription, with DeliveryFailed, disables the subscription
	// (it answered 410 Gone).
	DisableSubscription bool
	// Disabled is the audit event (audit.DeliveryDisabled) FinishAttempt
	// appends with DisableSubscription.
	Disabled audit.Event
}

// Rate is a throttling rate: Burst attempts at once, refilled at Burst per
// Per.
type Rate struct {
	Burst int
	Per   time.Duration
}

// Interval is the time one attempt takes to refill, 0 for a rate without
// attempts. A bucket whose full time runs ahead of now by more than
// Burst × Interval is empty.
func (r Rate) Interval() time.Duration {
	if r.Burst <= 0 || r.Per <= 0 {
		return 0
	}
	return r.Per / time.Duration(r.Burst)
}

// OutboxStats describes the pending deliveries of all workspaces.
type OutboxStats struct {
	Pending int64
	// OldestPending is the creation time of the oldest pending delivery,
	// zero when none is pending.
	OldestPending time.Time
}
