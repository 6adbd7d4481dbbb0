package store

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

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
	// UpdateClient changes the client's name and labels as u says and
	// appends e (audit.ClientUpdate) with the changes it made, in one
	// transaction, and returns the client as it is then. A change that
	// moves nothing appends nothing. ErrNotFound when there is no such
	// client, ErrTooManyLabels when the client would have more than
	// contract.MaxLabels.
	UpdateClient(ctx context.Context, id string, u ClientUpdate, e audit.Event) (Client, error)
	// ListClients returns the clients f selects ordered by creation time,
	// then id; by name (folded), then id, when f selects by a name's
	// prefix.
	ListClients(ctx context.Context, f ClientFilter) ([]Client, error)
	// ListWorkspaces returns up to limit workspaces (0: every one) whose
	// id is after after, in id order.
	ListWorkspaces(ctx context.Context, after string, limit int) ([]Workspace, error)
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
	// ListSharingGrants returns the grants f selects ordered by creation
	// time, then id.
	ListSharingGrants(ctx context.Context, f GrantFilter) ([]SharingGrant, error)
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
	// Name is the client's display name (contract.CheckClientName), ""
	// for none; Labels its labels (contract.CheckLabels), nil for none.
	Name   string
	Labels map[string]string
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

// GrantStatus says whether a grant is in force.
type GrantStatus string

// Grant statuses: a grant is revoked once its RevokedAt is set.
const (
	GrantActive  GrantStatus = "active"
	GrantRevoked GrantStatus = "revoked"
)

// GrantFilter selects sharing grants for ListSharingGrants, a page in
// creation order.
type GrantFilter struct {
	WorkspaceID string      // "" for every workspace
	ClientID    string      // "" for every client
	Status      GrantStatus // "" for any
	// After is where the page starts (zero: from the first).
	After Cursor
	Limit int // 0 for no bound
}
