package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/health-data-connect/hdc/backend/store"
)

// DataKey implements store.Store.
func (s *Store) DataKey(ctx context.Context) (store.WrappedKey, error) {
	var k store.WrappedKey
	var created sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT id, wrapped, keeper, created_at FROM data_keys WHERE slot = 'store'`).
		Scan(&k.ID, &k.Wrapped, &k.Keeper, &created)
	k.CreatedAt = fromMicros(created)
	return k, notFound(err)
}

// AddDataKey implements store.Store.
func (s *Store) AddDataKey(ctx context.Context, k store.WrappedKey) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO data_keys (id, slot, wrapped, keeper, created_at) VALUES (?, 'store', ?, ?, ?)
		ON CONFLICT DO NOTHING`, k.ID, k.Wrapped, k.Keeper, micros(k.CreatedAt))
	return changedRow(res, err)
}

// RewrapDataKey implements store.Store.
func (s *Store) RewrapDataKey(ctx context.Context, old []byte, next store.WrappedKey) error {
	res, err := s.db.ExecContext(ctx, `UPDATE data_keys SET wrapped = ?, keeper = ? WHERE id = ? AND wrapped = ?`, next.Wrapped, next.Keeper, next.ID, old)
	return changedRow(res, err)
}

// changedRow returns store.ErrConflict when the statement changed no row.
func changedRow(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if err := oneRow(res); !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return store.ErrConflict
}

// Secrets implements store.Store.
func (s *Store) Secrets(ctx context.Context) ([]store.StoredSecret, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT 'signing_key', id, seed FROM signing_keys
		UNION ALL SELECT 'hash_key', name, secret FROM hash_keys
		UNION ALL SELECT 'webhook_signing_key', id, signing_key FROM subscriptions WHERE signing_key IS NOT NULL`)
	return collect(rows, err, func(rows *sql.Rows) (store.StoredSecret, error) {
		var sec store.StoredSecret
		if err := rows.Scan(&sec.Kind, &sec.ID, &sec.Value); err != nil {
			return sec, err
		}
		if store.SecretColumns[sec.Kind].Bytes { // kept in hex
			b, err := hexBytes(sec.Value)
			sec.Value = string(b)
			return sec, err
		}
		return sec, nil
	})
}

// ReplaceSecret implements store.Store.
func (s *Store) ReplaceSecret(ctx context.Context, sec store.StoredSecret, next string) error {
	c, ok := store.SecretColumns[sec.Kind]
	if !ok {
		return fmt.Errorf("sqlite: no secret of kind %q", sec.Kind)
	}
	old := sec.Value
	if c.Bytes { // kept in hex
		old, next = hex.EncodeToString([]byte(old)), hex.EncodeToString([]byte(next))
	}
	res, err := s.db.ExecContext(ctx, // the names are package store's constants
		`UPDATE `+c.Table+` SET `+c.Value+` = ? WHERE `+c.ID+` = ? AND `+c.Value+` = ?`, next, sec.ID, old)
	return changedRow(res, err)
}

// Compact implements store.Store: every page is written to the file and
// the write-ahead log emptied, then the file rebuilt without free pages,
// then the log emptied again. Freed space was zeroed as it was freed
// (secure_delete, set on every connection).
func (s *Store) Compact(ctx context.Context) error {
	for _, stmt := range []string{`PRAGMA wal_checkpoint(TRUNCATE)`, `VACUUM`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("sqlite: %s: %w", stmt, err)
		}
	}
	return nil
}

// KeylessSubscriptions implements store.Store.
func (s *Store) KeylessSubscriptions(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM subscriptions WHERE signing_key IS NULL ORDER BY id`)
	return collect(rows, err, func(rows *sql.Rows) (string, error) {
		var id string
		return id, rows.Scan(&id)
	})
}

// FillSigningKey implements store.Store.
func (s *Store) FillSigningKey(ctx context.Context, id, key string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE subscriptions SET signing_key = ? WHERE id = ? AND signing_key IS NULL`, key, id)
	return changedRow(res, err)
}
