package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// RevokeCertificate implements store.Store.
func (s *Store) RevokeCertificate(ctx context.Context, c store.RevokedCertificate, e audit.Event) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO revoked_certificates (serial, name, role, revoked_at, revoked_by)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (serial) DO NOTHING`, c.Serial, c.Name, c.Role, ts(c.RevokedAt), c.RevokedBy)
		if err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// RevokedCertificates implements store.Store.
func (s *Store) RevokedCertificates(ctx context.Context) ([]store.RevokedCertificate, error) {
	rows, err := s.pool.Query(ctx, `SELECT serial, name, role, revoked_at, revoked_by FROM revoked_certificates ORDER BY serial COLLATE "C"`)
	return collect(rows, err, func(row pgx.Row) (store.RevokedCertificate, error) {
		var c store.RevokedCertificate
		err := row.Scan(&c.Serial, &c.Name, &c.Role, &c.RevokedAt, &c.RevokedBy)
		c.RevokedAt = c.RevokedAt.UTC()
		return c, err
	})
}

// BeginIdempotent implements store.Store.
func (s *Store) BeginIdempotent(ctx context.Context, k store.IdempotencyKey, hash []byte, now, expire time.Time) (store.Idempotent, bool, error) {
	var held store.Idempotent
	began := false
	err := s.tx(ctx, func(tx pgx.Tx) error {
		held, began = store.Idempotent{}, false
		if _, err := tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, ts(expire)); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (person, key, hash, status, created_at)
			VALUES ($1, $2, $3, 0, $4) ON CONFLICT (person, key) DO NOTHING`, k.Person, k.Key, hash, ts(now))
		if err != nil || tag.RowsAffected() == 1 {
			began = err == nil
			return err
		}
		err = tx.QueryRow(ctx, `SELECT hash, status, body, created_at FROM idempotency_keys WHERE person = $1 AND key = $2`,
			k.Person, k.Key).Scan(&held.Hash, &held.Status, &held.Body, &held.CreatedAt)
		held.CreatedAt = held.CreatedAt.UTC()
		return err
	})
	return held, began, err
}

// FinishIdempotent implements store.Store.
func (s *Store) FinishIdempotent(ctx context.Context, k store.IdempotencyKey, status int, body []byte) error {
	if status <= 0 {
		return errors.New("postgres: an answer's status is positive")
	}
	return oneRow(s.pool.Exec(ctx, `UPDATE idempotency_keys SET status = $1, body = $2 WHERE person = $3 AND key = $4`,
		status, body, k.Person, k.Key))
}

// AbandonIdempotent implements store.Store.
func (s *Store) AbandonIdempotent(ctx context.Context, k store.IdempotencyKey) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE person = $1 AND key = $2`, k.Person, k.Key)
	return err
}
