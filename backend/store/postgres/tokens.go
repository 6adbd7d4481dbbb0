package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/store"
)

// CreateRefreshFamily implements store.Store.
func (s *Store) CreateRefreshFamily(ctx context.Context, f store.RefreshFamily, first store.RefreshToken) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx,
			`INSERT INTO refresh_families (id, client_id, workspace_id, grant_id, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			f.ID, f.ClientID, f.WorkspaceID, nullText(f.GrantID), ts(f.CreatedAt), nullTS(f.RevokedAt))
		if err != nil {
			return translate(err)
		}
		first.FamilyID = f.ID
		return insertRefreshToken(ctx, tx, first)
	})
}

func insertRefreshToken(ctx context.Context, tx pgx.Tx, t store.RefreshToken) error {
	_, err := tx.Exec(ctx,
		`INSERT INTO refresh_tokens (hash, family_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		t.Hash, t.FamilyID, ts(t.CreatedAt), ts(t.ExpiresAt))
	return translate(err)
}

// RefreshFamilyOf implements store.Store.
func (s *Store) RefreshFamilyOf(ctx context.Context, clientID string, hash []byte) (store.RefreshFamily, error) {
	var (
		f       store.RefreshFamily
		grant   pgtype.Text
		revoked pgtype.Timestamptz
	)
	err := s.pool.QueryRow(ctx, `
		SELECT f.id, f.client_id, f.workspace_id, f.grant_id, f.created_at, f.revoked_at
		FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id
		WHERE t.hash = $1 AND f.client_id = $2`, hash, clientID).
		Scan(&f.ID, &f.ClientID, &f.WorkspaceID, &grant, &f.CreatedAt, &revoked)
	if err != nil {
		return store.RefreshFamily{}, notFound(err)
	}
	f.GrantID = grant.String
	f.CreatedAt = f.CreatedAt.UTC()
	if revoked.Valid {
		f.RevokedAt = revoked.Time.UTC()
	}
	return f, nil
}

// RotateRefreshToken implements store.Store. The presented token's row is
// locked first (FOR UPDATE), so that concurrent rotations of one token, on
// any replicas, are decided one after the other: the first consumes it,
// the others find it used and revoke the family. The conditional UPDATE
// … WHERE used_at IS NULL makes the consumption itself safe as well.
func (s *Store) RotateRefreshToken(ctx context.Context, clientID string, hash []byte, next store.RefreshToken, now time.Time) (store.RefreshFamily, error) {
	var (
		f store.RefreshFamily
		// reused is set when the family was revoked for reuse: the
		// transaction must commit that before the caller hears of it.
		reused bool
	)
	err := s.tx(ctx, func(tx pgx.Tx) error {
		f, reused = store.RefreshFamily{}, false
		var (
			expires       time.Time
			used          pgtype.Timestamptz
			grant         pgtype.Text
			familyRevoked pgtype.Timestamptz
		)
		err := tx.QueryRow(ctx, `
			SELECT t.expires_at, t.used_at, f.id, f.client_id, f.workspace_id, f.grant_id, f.created_at, f.revoked_at
			FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id
			WHERE t.hash = $1
			FOR UPDATE OF t`, hash).
			Scan(&expires, &used, &f.ID, &f.ClientID, &f.WorkspaceID, &grant, &f.CreatedAt, &familyRevoked)
		if err != nil {
			return notFound(err)
		}
		f.GrantID = grant.String
		f.CreatedAt = f.CreatedAt.UTC()
		switch {
		case f.ClientID != clientID, familyRevoked.Valid:
			return store.ErrNotFound
		case used.Valid:
			reused = true
			_, err := tx.Exec(ctx, revokeFamily, ts(now), f.ID)
			return err
		case !expires.After(ts(now)):
			return store.ErrNotFound
		}
		tag, err := tx.Exec(ctx,
			`UPDATE refresh_tokens SET used_at = $1 WHERE hash = $2 AND used_at IS NULL`, ts(now), hash)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			reused = true
			_, err := tx.Exec(ctx, revokeFamily, ts(now), f.ID)
			return err
		}
		next.FamilyID = f.ID
		return insertRefreshToken(ctx, tx, next)
	})
	switch {
	case err != nil:
		return store.RefreshFamily{}, err
	case reused:
		return store.RefreshFamily{}, store.ErrTokenReused
	}
	return f, nil
}

// revokeFamily revokes a token family; revoking a revoked family keeps the
// first revocation time.
const revokeFamily = `UPDATE refresh_families SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`

// RevokeRefreshFamily implements store.Store.
func (s *Store) RevokeRefreshFamily(ctx context.Context, familyID string, now time.Time) error {
	return oneRow(s.pool.Exec(ctx, revokeFamily, ts(now), familyID))
}

// ListSigningKeys implements store.Store.
func (s *Store) ListSigningKeys(ctx context.Context) ([]store.SigningKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, generation, seed, created_at FROM signing_keys ORDER BY generation`)
	return collect(rows, err, func(row pgx.Row) (store.SigningKey, error) {
		var k store.SigningKey
		err := row.Scan(&k.ID, &k.Generation, &k.Seed, &k.CreatedAt)
		k.CreatedAt = k.CreatedAt.UTC()
		return k, err
	})
}

// AddSigningKey implements store.Store.
func (s *Store) AddSigningKey(ctx context.Context, k store.SigningKey) error {
	_, err := s.pool.Exec(ctx,
		`INSERT INTO signing_keys (id, generation, seed, created_at) VALUES ($1, $2, $3, $4)`,
		k.ID, k.Generation, k.Seed, ts(k.CreatedAt))
	return translate(err)
}

// DeleteSigningKey implements store.Store.
func (s *Store) DeleteSigningKey(ctx context.Context, id string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM signing_keys WHERE id = $1`, id)
	return err
}
