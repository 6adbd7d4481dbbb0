package store

import (
	"context"
	"net/netip"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// WebhookDestinations are the private receivers operators grant
// workspaces (package webhook): an address prefix, and a port or every
// port, that one workspace's webhooks may reach although the SSRF guard
// refuses it to every other. A revoked grant keeps its row, which its
// audit records name.
type WebhookDestinations interface {
	// GrantDestination stores d, in force, and appends e in the same
	// transaction; ErrNotFound when its workspace does not exist,
	// ErrConflict when the workspace has a grant in force of the same
	// prefix and port.
	GrantDestination(ctx context.Context, d WebhookDestination, e audit.Event) error
	// ListDestinations returns the grants f selects, in creation order,
	// then id.
	ListDestinations(ctx context.Context, f DestinationFilter) ([]WebhookDestination, error)
	// RevokeDestination revokes the workspace's grant id at e.At in the
	// name of by (a revoked grant keeps its first revocation), appends e
	// in the same transaction, and returns the grant as it then is;
	// ErrNotFound when the workspace has no such grant.
	RevokeDestination(ctx context.Context, workspaceID, id, by string, e audit.Event) (WebhookDestination, error)
}

// DestinationFilter selects grants for ListDestinations.
type DestinationFilter struct {
	WorkspaceID string // "" for every workspace
	// InForce leaves the revoked grants out.
	InForce bool
}

// WebhookDestination is a private receiver granted to a workspace.
type WebhookDestination struct {
	ID          string
	WorkspaceID string
	// Prefix is the addresses granted, masked (an address is a /32 or a
	// /128), never IPv4-mapped.
	Prefix netip.Prefix
	// Port is the port granted, 0 for every port.
	Port uint16
	// CreatedAt and CreatedBy say when and by whom (a person's name) it
	// was granted; RevokedAt and RevokedBy when and by whom it was
	// revoked, zero and empty while it is in force.
	CreatedAt time.Time
	CreatedBy string
	RevokedAt time.Time
	RevokedBy string
}
