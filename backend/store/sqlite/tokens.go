package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// CreateRefreshFamily implements store.Store.
func (s *Store) CreateRefreshFamily(ctx context.Context, f store.RefreshFamily, first store.RefreshToken, e audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO refresh_families (id, client_id, workspace_id, grant_id, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)`,
			f.ID, f.ClientID, f.WorkspaceID, nullString(f.GrantID), micros(f.CreatedAt), nullMicros(f.RevokedAt))
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

func insertRefreshToken(ctx context.Context, tx *sql.Tx, t store.RefreshToken) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO refresh_tokens (hash, family_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		hex.EncodeToString(t.Hash), t.FamilyID, micros(t.CreatedAt), micros(t.ExpiresAt))
	return translate(err)
}

// RefreshFamilyOf implements store.Store.
func (s *Store) RefreshFamilyOf(ctx context.Context, clientID string, hash []byte) (store.RefreshFamily, error) {
	return scanFamily(s.db.QueryRowContext(ctx, `
		SELECT f.id, f.client_id, f.workspace_id, f.grant_id, f.created_at, f.revoked_at
		FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id
		WHERE t.hash = ? AND f.client_id = ?`, hex.EncodeToString(hash), clientID))
}

// RefreshFamily implements store.Store.
func (s *Store) RefreshFamily(ctx context.Context, id string) (store.RefreshFamily, error) {
	return scanFamily(s.db.QueryRowContext(ctx, `
		SELECT f.id, f.client_id, f.workspace_id, f.grant_id, f.created_at, f.revoked_at
		FROM refresh_families f WHERE f.id = ?`, id))
}

// scanFamily reads a family's row: id, client, workspace, grant, created
// and revoked.
func scanFamily(row *sql.Row) (store.RefreshFamily, error) {
	var (
		f       store.RefreshFamily
		grant   sql.NullString
		created int64
		revoked sql.NullInt64
	)
	if err := row.Scan(&f.ID, &f.ClientID, &f.WorkspaceID, &grant, &created, &revoked); err != nil {
		return store.RefreshFamily{}, notFound(err)
	}
	f.GrantID = grant.String
	f.CreatedAt = time.UnixMicro(created).UTC()
	if revoked.Valid {
		f.RevokedAt = time.UnixMicro(revoked.Int64).UTC()
	}
	return f, nil
}

// RefreshTokenClient implements store.Store.
func (s *Store) RefreshTokenClient(ctx context.Context, hash []byte) (string, error) {
	var client string
	err := s.db.QueryRowContext(ctx, `
		SELECT f.client_id FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id
		WHERE t.hash = ?`, hex.EncodeToString(hash)).Scan(&client)
	return client, notFound(err)
}

// RotateRefreshToken implements store.Store with store.Rotate. The
// transaction holds SQLite's write lock from its start, so rotations of one
// token are decided one after the other.
func (s *Store) RotateRefreshToken(ctx context.Context, clientID string, hash []byte, next store.RefreshToken, now time.Time, e audit.Event) (store.RefreshFamily, error) {
	inTx := func(fn func(store.RotationTx) error) error {
		return s.tx(ctx, func(tx *sql.Tx) error { return fn(rotationTx{s.auditTx(tx)}) })
	}
	return store.Rotate(ctx, inTx, clientID, hash, next, now, e)
}

// rotationTx is store.RotationTx in a SQLite transaction.
type rotationTx struct{ auditTx }

func (r rotationTx) LockToken(ctx context.Context, hash []byte) (store.PresentedToken, error) {
	var (
		t       store.PresentedToken
		expires int64
		used    sql.NullInt64
		grant   sql.NullString
		created int64
		revoked sql.NullInt64
	)
	err := r.tx.QueryRowContext(ctx, `
		SELECT t.expires_at, t.used_at, f.id, f.client_id, f.workspace_id, f.grant_id, f.created_at, f.revoked_at
		FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id
		WHERE t.hash = ?`, hex.EncodeToString(hash)).
		Scan(&expires, &used, &t.Family.ID, &t.Family.ClientID, &t.Family.WorkspaceID, &grant, &created, &revoked)
	if err != nil {
		return t, notFound(err)
	}
	t.Family.GrantID = grant.String
	t.Family.CreatedAt = time.UnixMicro(created).UTC()
	t.Family.RevokedAt = fromMicros(revoked)
	t.ExpiresAt = time.UnixMicro(expires).UTC()
	t.Used = used.Valid
	return t, nil
}

func (r rotationTx) ConsumeToken(ctx context.Context, hash []byte, now time.Time) (bool, error) {
	res, err := r.tx.ExecContext(ctx,
		`UPDATE refresh_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL`, micros(now), hex.EncodeToString(hash))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (r rotationTx) InsertToken(ctx context.Context, t store.RefreshToken) error {
	return insertRefreshToken(ctx, r.tx, t)
}

func (r rotationTx) RevokeFamily(ctx context.Context, familyID string, now time.Time) error {
	_, err := r.tx.ExecContext(ctx, revokeFamily, micros(now), familyID)
	return err
}

// revokeFamily revokes a token family; revoking a revoked family keeps the
// first revocation time.
const revokeFamily = `UPDATE refresh_families SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`

// RevokeRefreshFamily implements store.Store.
func (s *Store) RevokeRefreshFamily(ctx context.Context, familyID string, now time.Time) error {
	res, err := s.db.ExecContext(ctx, revokeFamily, micros(now), familyID)
	if err != nil {
		return err
	}
	return oneRow(res)
}

// ListSigningKeys implements store.Store.
func (s *Store) ListSigningKeys(ctx context.Context) ([]store.SigningKey, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT id, generation, seed, created_at FROM signing_keys ORDER BY generation`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.SigningKey
	for rows.Next() {
		var k store.SigningKey
		var seed string
		var created int64
		if err := rows.Scan(&k.ID, &k.Generation, &seed, &created); err != nil {
			return nil, err
		}
		if k.Seed, err = hexBytes(seed); err != nil {
			return nil, err
		}
		k.CreatedAt = time.UnixMicro(created).UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

// AddSigningKey implements store.Store.
func (s *Store) AddSigningKey(ctx context.Context, k store.SigningKey) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO signing_keys (id, generation, seed, created_at) VALUES (?, ?, ?, ?)`,
		k.ID, k.Generation, hex.EncodeToString(k.Seed), micros(k.CreatedAt))
	return translate(err)
}

// DeleteSigningKey implements store.Store.
func (s *Store) DeleteSigningKey(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM signing_keys WHERE id = ?`, id)
	return err
}
