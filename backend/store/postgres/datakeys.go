package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/store"
)

// DataKey implements store.Store.
func (s *Store) DataKey(ctx context.Context) (store.WrappedKey, error) {
	var k store.WrappedKey
	var created pgtype.Timestamptz
	err := s.pool.QueryRow(ctx, `SELECT id, wrapped, keeper, created_at FROM data_keys WHERE slot = 'store'`).
		Scan(&k.ID, &k.Wrapped, &k.Keeper, &created)
	k.CreatedAt = fromTS(created)
	return k, notFound(err)
}

// AddDataKey implements store.Store.
func (s *Store) AddDataKey(ctx context.Context, k store.WrappedKey) error {
	return changedRow(s.pool.Exec(ctx, `INSERT INTO data_keys (id, slot, wrapped, keeper, created_at) VALUES ($1, 'store', $2, $3, $4)
		ON CONFLICT DO NOTHING`, k.ID, k.Wrapped, k.Keeper, ts(k.CreatedAt)))
}

// RewrapDataKey implements store.Store.
func (s *Store) RewrapDataKey(ctx context.Context, old []byte, next store.WrappedKey) error {
	return changedRow(s.pool.Exec(ctx, `UPDATE data_keys SET wrapped = $1, keeper = $2 WHERE id = $3 AND wrapped = $4`,
		next.Wrapped, next.Keeper, next.ID, old))
}

// changedRow returns store.ErrConflict when the statement changed no row.
func changedRow(tag pgconn.CommandTag, err error) error {
	if err := oneRow(tag, err); !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return store.ErrConflict
}

// Secrets implements store.Store.
func (s *Store) Secrets(ctx context.Context) ([]store.StoredSecret, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT 'signing_key', id, seed FROM signing_keys
		UNION ALL SELECT 'hash_key', name, secret FROM hash_keys
		UNION ALL SELECT 'webhook_signing_key', id, convert_to(signing_key, 'UTF8') FROM subscriptions WHERE signing_key IS NOT NULL`)
	return collect(rows, err, func(row pgx.Row) (store.StoredSecret, error) {
		var sec store.StoredSecret
		var value []byte
		err := row.Scan(&sec.Kind, &sec.ID, &value)
		sec.Value = string(value)
		return sec, err
	})
}

// ReplaceSecret implements store.Store.
func (s *Store) ReplaceSecret(ctx context.Context, sec store.StoredSecret, next string) error {
	c, ok := store.SecretColumns[sec.Kind]
	if !ok {
		return fmt.Errorf("postgres: no secret of kind %q", sec.Kind)
	}
	var old, value any = sec.Value, next
	if c.Bytes { // bytea
		old, value = []byte(sec.Value), []byte(next)
	}
	return changedRow(s.pool.Exec(ctx, // the names are package store's constants
		`UPDATE `+c.Table+` SET `+c.Value+` = $1 WHERE `+c.ID+` = $2 AND `+c.Value+` = $3`, value, sec.ID, old))
}

// KeylessSubscriptions implements store.Store.
func (s *Store) KeylessSubscriptions(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM subscriptions WHERE signing_key IS NULL ORDER BY id COLLATE "C"`)
	return collect(rows, err, func(row pgx.Row) (string, error) {
		var id string
		return id, row.Scan(&id)
	})
}

// FillSigningKey implements store.Store.
func (s *Store) FillSigningKey(ctx context.Context, id, key string) error {
	return changedRow(s.pool.Exec(ctx, `UPDATE subscriptions SET signing_key = $1 WHERE id = $2 AND signing_key IS NULL`, key, id))
}

// Compact implements store.Store: a replaced value is in no live row, and
// nothing else is done.
func (s *Store) Compact(context.Context) error { return nil }
