package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// RevokeCertificate implements store.Store.
func (s *Store) RevokeCertificate(ctx context.Context, c store.RevokedCertificate, e audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO revoked_certificates (serial, name, role, revoked_at, revoked_by)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (serial) DO NOTHING`, c.Serial, c.Name, c.Role, micros(c.RevokedAt), c.RevokedBy)
		if err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// RevokedCertificates implements store.Store.
func (s *Store) RevokedCertificates(ctx context.Context) ([]store.RevokedCertificate, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT serial, name, role, revoked_at, revoked_by FROM revoked_certificates ORDER BY serial`)
	return collect(rows, err, func(rows *sql.Rows) (store.RevokedCertificate, error) {
		var c store.RevokedCertificate
		var at int64
		err := rows.Scan(&c.Serial, &c.Name, &c.Role, &at, &c.RevokedBy)
		c.RevokedAt = time.UnixMicro(at).UTC()
		return c, err
	})
}

// BeginIdempotent implements store.Store.
func (s *Store) BeginIdempotent(ctx context.Context, k store.IdempotencyKey, hash []byte, now, expire time.Time) (store.Idempotent, bool, error) {
	var held store.Idempotent
	began := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < ?`, micros(expire)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (person, key, hash, status, created_at)
			VALUES (?, ?, ?, 0, ?) ON CONFLICT (person, key) DO NOTHING`, k.Person, k.Key, hash, micros(now))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			began = n == 1
			return err
		}
		var at int64
		err = tx.QueryRowContext(ctx, `SELECT hash, status, body, created_at FROM idempotency_keys WHERE person = ? AND key = ?`,
			k.Person, k.Key).Scan(&held.Hash, &held.Status, &held.Body, &at)
		held.CreatedAt = time.UnixMicro(at).UTC()
		return err
	})
	return held, began, err
}

// FinishIdempotent implements store.Store.
func (s *Store) FinishIdempotent(ctx context.Context, k store.IdempotencyKey, status int, body []byte) error {
	if status <= 0 {
		return errors.New("sqlite: an answer's status is positive")
	}
	res, err := s.db.ExecContext(ctx, `UPDATE idempotency_keys SET status = ?, body = ? WHERE person = ? AND key = ?`,
		status, body, k.Person, k.Key)
	if err != nil {
		return err
	}
	return oneRow(res)
}

// AbandonIdempotent implements store.Store.
func (s *Store) AbandonIdempotent(ctx context.Context, k store.IdempotencyKey) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE person = ? AND key = ?`, k.Person, k.Key)
	return err
}
