package store

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

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

// PresentedToken is what an engine read, under a lock, of a refresh token
// presented for rotation: its family and its own state.
type PresentedToken struct {
	Family    RefreshFamily
	ExpiresAt time.Time
	// Used is set when the token was consumed by an earlier rotation.
	Used bool
}

// RotationTx is an engine's side of RotateRefreshToken: statements in one
// transaction, with no decision of their own.
type RotationTx interface {
	AuditTx
	// LockToken reads the token hashing to hash and its family, locking
	// the token's row until the transaction ends, or returns ErrNotFound.
	LockToken(ctx context.Context, hash []byte) (PresentedToken, error)
	// ConsumeToken marks the token used at now unless it already is, and
	// reports whether it did.
	ConsumeToken(ctx context.Context, hash []byte, now time.Time) (bool, error)
	// InsertToken stores t.
	InsertToken(ctx context.Context, t RefreshToken) error
	// RevokeFamily revokes the family at now, keeping an earlier revocation.
	RevokeFamily(ctx context.Context, familyID string, now time.Time) error
}

// Rotate is Store.RotateRefreshToken for engines: inTx runs its function
// in one transaction of the engine, committing when it returns nil. A token
// that is unknown, of another client than clientID, of a revoked family or
// expired gives ErrNotFound and changes nothing. A token that was consumed
// before, or that a concurrent rotation consumed between the read and the
// update, revokes its family, which is committed, and gives ErrTokenReused.
// Otherwise the token is consumed and next is stored in its family, and
// Rotate returns the family.
//
// e is the request's audit event: Rotate sets its workspace and grant to
// the family's and appends it, in the transaction that decides, as
// audit.Refresh (success) with a rotation, or as audit.RefreshReuse
// (denied) with the revocation for reuse. A refusal that changes nothing
// (ErrNotFound) appends nothing.
func Rotate(ctx context.Context, inTx func(func(RotationTx) error) error, clientID string, hash []byte, next RefreshToken, now time.Time, e audit.Event) (RefreshFamily, error) {
	var (
		f      RefreshFamily
		reused bool
	)
	err := inTx(func(tx RotationTx) error {
		var err error
		var fam RefreshFamily
		f, reused, fam, err = rotate(ctx, tx, clientID, hash, next, now)
		if err != nil {
			return err
		}
		e.Workspace, e.Grant, e.Action, e.Outcome = fam.WorkspaceID, fam.GrantID, audit.Refresh, audit.Success
		if reused {
			e.Action, e.Outcome = audit.RefreshReuse, audit.Denied
		}
		_, err = AppendAudit(ctx, tx, e)
		return err
	})
	switch {
	case err != nil:
		return RefreshFamily{}, err
	case reused:
		return RefreshFamily{}, ErrTokenReused
	}
	return f, nil
}

// rotate decides in tx; reused means the family was revoked for reuse, to
// be committed and then reported. fam is the token's family in both cases.
func rotate(ctx context.Context, tx RotationTx, clientID string, hash []byte, next RefreshToken, now time.Time) (_ RefreshFamily, reused bool, fam RefreshFamily, _ error) {
	t, err := tx.LockToken(ctx, hash)
	switch {
	case err != nil:
		return RefreshFamily{}, false, fam, err
	case t.Family.ClientID != clientID || !t.Family.RevokedAt.IsZero():
		return RefreshFamily{}, false, fam, ErrNotFound
	case t.Used:
		return RefreshFamily{}, true, t.Family, tx.RevokeFamily(ctx, t.Family.ID, now)
	case !t.ExpiresAt.After(now):
		return RefreshFamily{}, false, fam, ErrNotFound
	}
	consumed, err := tx.ConsumeToken(ctx, hash, now)
	if err != nil {
		return RefreshFamily{}, false, fam, err
	}
	if !consumed {
		return RefreshFamily{}, true, t.Family, tx.RevokeFamily(ctx, t.Family.ID, now)
	}
	next.FamilyID = t.Family.ID
	return t.Family, false, t.Family, tx.InsertToken(ctx, next)
}
