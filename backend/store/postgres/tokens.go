package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// CreateRefreshFamily implements store.Store.
func (s *Store) CreateRefreshFamily(ctx context.Context, f store.RefreshFamily, first store.RefreshToken, e audit.Event) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx,
			`INSERT INTO refresh_families (id, client_id, workspace_id, grant_id, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			f.ID, f.ClientID, f.WorkspaceID, nullText(f.GrantID), ts(f.CreatedAt), nullTS(f.RevokedAt))
		if err != nil {
			return translate(err)
		}
		first.FamilyID = f.ID
		if err := insertRefreshToken(ctx, tx, first); err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
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
	return scanFamily(s.pool.QueryRow(ctx, `
		SELECT f.id, f.client_id, f.workspace_id, f.grant_id, f.created_at, f.revoked_at
		FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id
		WHERE t.hash = $1 AND f.client_id = $2`, hash, clientID))
}

// RefreshFamily implements store.Store.
func (s *Store) RefreshFamily(ctx context.Context, id string) (store.RefreshFamily, error) {
	return scanFamily(s.pool.QueryRow(ctx, `
		SELECT f.id, f.client_id, f.workspace_id, f.grant_id, f.created_at, f.revoked_at
		FROM refresh_families f WHERE f.id = $1`, id))
}

// scanFamily reads a family's row: id, client, workspace, grant, created
// and revoked.
func scanFamily(row pgx.Row) (store.RefreshFamily, error) {
	var (
		f       store.RefreshFamily
		grant   pgtype.Text
		revoked pgtype.Timestamptz
	)
	if err := row.Scan(&f.ID, &f.ClientID, &f.WorkspaceID, &grant, &f.CreatedAt, &revoked); err != nil {
		return store.RefreshFamily{}, notFound(err)
	}
	f.GrantID = grant.String
	f.CreatedAt = f.CreatedAt.UTC()
	if revoked.Valid {
		f.RevokedAt = revoked.Time.UTC()
	}
	return f, nil
}

// RefreshTokenClient implements store.Store.
func (s *Store) RefreshTokenClient(ctx context.Context, hash []byte) (string, error) {
	var client string
	err := s.pool.QueryRow(ctx, `
		SELECT f.client_id FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id
		WHERE t.hash = $1`, hash).Scan(&client)
	return client, notFound(err)
}

// RotateRefreshToken implements store.Store with store.Rotate. The
// presented token's row is locked first (FOR UPDATE), so that concurrent
// rotations of one token, on any replicas, are decided one after the other.
func (s *Store) RotateRefreshToken(ctx context.Context, clientID string, hash []byte, next store.RefreshToken, now time.Time, e audit.Event) (store.RefreshFamily, error) {
	inTx := func(fn func(store.RotationTx) error) error {
		return s.tx(ctx, func(tx pgx.Tx) error { return fn(rotationTx{s.auditTx(tx)}) })
	}
	return store.Rotate(ctx, inTx, clientID, hash, next, now, e)
}

// rotationTx is store.RotationTx in a PostgreSQL transaction.
type rotationTx struct{ auditTx }

func (r rotationTx) LockToken(ctx context.Context, hash []byte) (store.PresentedToken, error) {
	var (
		t       store.PresentedToken
		used    pgtype.Timestamptz
		grant   pgtype.Text
		revoked pgtype.Timestamptz
	)
	err := r.tx.QueryRow(ctx, `
		SELECT t.expires_at, t.used_at, f.id, f.client_id, f.workspace_id, f.grant_id, f.created_at, f.revoked_at
		FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id
		WHERE t.hash = $1
		FOR UPDATE OF t`, hash).
		Scan(&t.ExpiresAt, &used, &t.Family.ID, &t.Family.ClientID, &t.Family.WorkspaceID, &grant, &t.Family.CreatedAt, &revoked)
	if err != nil {
		return t, notFound(err)
	}
	t.Family.GrantID = grant.String
	t.Family.CreatedAt = t.Family.CreatedAt.UTC()
	t.Family.RevokedAt = fromTS(revoked)
	t.ExpiresAt = t.ExpiresAt.UTC()
	t.Used = used.Valid
	return t, nil
}

func (r rotationTx) ConsumeToken(ctx context.Context, hash []byte, now time.Time) (bool, error) {
	tag, err := r.tx.Exec(ctx, `UPDATE refresh_tokens SET used_at = $1 WHERE hash = $2 AND used_at IS NULL`, ts(now), hash)
	return err == nil && tag.RowsAffected() == 1, err
}

func (r rotationTx) InsertToken(ctx context.Context, t store.RefreshToken) error {
	return insertRefreshToken(ctx, r.tx, t)
}

func (r rotationTx) RevokeFamily(ctx context.Context, familyID string, now time.Time) error {
	_, err := r.tx.Exec(ctx, revokeFamily, ts(now), familyID)
	return err
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
