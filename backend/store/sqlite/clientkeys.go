package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

const clientKeyColumns = `kid, client_id, workspace_id, secret, enc, require_fresh, status, created_at, retiring_at, retired_at, seq`

// AddClientKey implements store.Store.
func (s *Store) AddClientKey(ctx context.Context, k store.ClientKey, e audit.Event) (store.ClientKey, error) {
	k.Status = clientkey.Active
	err := s.keyChange(ctx, e, func(tx *sql.Tx) error { return insertClientKey(ctx, tx, &k) })
	return k, err
}

// RotateClientKey implements store.Store.
func (s *Store) RotateClientKey(ctx context.Context, k store.ClientKey, e audit.Event) (store.ClientKey, error) {
	err := s.keyChange(ctx, e, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+clientKeyColumns+` FROM client_keys WHERE client_id = ?`, k.ClientID)
		keys, err := collect(rows, err, func(r *sql.Rows) (store.ClientKey, error) { return scanClientKey(r) })
		if err != nil {
			return err
		}
		changed, added, err := clientkey.Rotate(store.Keys(keys), k.Key, k.CreatedAt)
		if errors.Is(err, clientkey.ErrNoKeys) {
			return store.ErrNotFound
		}
		for _, c := range changed {
			if _, err := updateClientKey(ctx, tx, c); err != nil {
				return err
			}
		}
		k.Key = added
		return insertClientKey(ctx, tx, &k)
	})
	return k, err
}

// RetireClientKey implements store.Store.
func (s *Store) RetireClientKey(ctx context.Context, kid string, now time.Time, e audit.Event) (store.ClientKey, error) {
	var k store.ClientKey
	err := s.keyChange(ctx, e, func(tx *sql.Tx) error {
		var err error
		if k, err = scanClientKey(tx.QueryRowContext(ctx, `SELECT `+clientKeyColumns+` FROM client_keys WHERE kid = ?`, kid)); err != nil {
			return err
		}
		retired, changed := clientkey.Retire(k.Key, now.Truncate(time.Microsecond))
		if !changed {
			return nil
		}
		k.Key = retired
		k.Seq, err = updateClientKey(ctx, tx, retired)
		return err
	})
	return k, err
}

// ImportClientKeys implements store.Store.
func (s *Store) ImportClientKeys(ctx context.Context, keys []store.ClientKey, events []audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for i := range keys {
			if err := insertClientKey(ctx, tx, &keys[i]); err != nil {
				return err
			}
			if _, err := store.AppendAudit(ctx, s.auditTx(tx), events[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClientKey implements store.Store.
func (s *Store) ClientKey(ctx context.Context, kid string) (store.ClientKey, error) {
	return scanClientKey(s.db.QueryRowContext(ctx, `SELECT `+clientKeyColumns+` FROM client_keys WHERE kid = ?`, kid))
}

// ListClientKeys implements store.Store.
func (s *Store) ListClientKeys(ctx context.Context, f store.ClientKeyFilter) ([]store.ClientKey, error) {
	// Two statements, so that a client's keys are found by its index.
	query, args := `SELECT `+clientKeyColumns+` FROM client_keys WHERE kid > ? ORDER BY kid LIMIT ?`, []any{f.After, f.Limit}
	if f.ClientID != "" {
		query = `SELECT ` + clientKeyColumns + ` FROM client_keys WHERE kid > ? AND client_id = ? ORDER BY kid LIMIT ?`
		args = []any{f.After, f.ClientID, f.Limit}
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	keys, err := collect(rows, err, func(r *sql.Rows) (store.ClientKey, error) { return scanClientKey(r) })
	for i := range keys {
		keys[i].Secret = ""
	}
	return keys, err
}

// ClientKeyChanges implements store.Store.
func (s *Store) ClientKeyChanges(ctx context.Context, after int64, limit int) ([]clientkey.Change, int64, error) {
	var last int64
	if err := s.db.QueryRowContext(ctx, `SELECT seq FROM key_plane`).Scan(&last); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT kid, seq FROM client_keys WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`, after, last, limit)
	changes, err := collect(rows, err, func(r *sql.Rows) (clientkey.Change, error) {
		var c clientkey.Change
		return c, r.Scan(&c.Kid, &c.Seq)
	})
	return changes, last, err
}

// ListenClientKeys implements store.Store: SQLite has no notifications
// (the CLI changes keys from another process), so followers poll.
func (s *Store) ListenClientKeys(context.Context, func()) error { return store.ErrNoListen }

// keyChange runs change and appends e in one transaction.
func (s *Store) keyChange(ctx context.Context, e audit.Event, change func(*sql.Tx) error) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := change(tx); err != nil {
			return err
		}
		_, err := store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// insertClientKey stores k with the next sequence number, which it sets.
func insertClientKey(ctx context.Context, tx *sql.Tx, k *store.ClientKey) error {
	seq, err := nextKeySeq(ctx, tx)
	if err != nil {
		return err
	}
	k.Seq = seq
	_, err = tx.ExecContext(ctx, `INSERT INTO client_keys (`+clientKeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.Kid, k.ClientID, k.WorkspaceID, k.Secret, k.Enc, k.RequireFresh, k.Status, micros(k.CreatedAt), nullMicros(k.RetiringAt), nullMicros(k.RetiredAt), seq)
	return translate(err)
}

// updateClientKey stores k's status and dates with the next sequence
// number, which it returns.
func updateClientKey(ctx context.Context, tx *sql.Tx, k clientkey.Key) (int64, error) {
	seq, err := nextKeySeq(ctx, tx)
	if err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE client_keys SET status = ?, retiring_at = ?, retired_at = ?, seq = ? WHERE kid = ?`,
		k.Status, nullMicros(k.RetiringAt), nullMicros(k.RetiredAt), seq, k.Kid)
	return seq, err
}

// nextKeySeq takes the key plane's next sequence number.
func nextKeySeq(ctx context.Context, tx *sql.Tx) (int64, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `UPDATE key_plane SET seq = seq + 1 RETURNING seq`).Scan(&seq)
	return seq, err
}

func scanClientKey(row interface{ Scan(...any) error }) (store.ClientKey, error) {
	var k store.ClientKey
	var created int64
	var retiring, retired sql.NullInt64
	err := row.Scan(&k.Kid, &k.ClientID, &k.WorkspaceID, &k.Secret, &k.Enc, &k.RequireFresh, &k.Status, &created, &retiring, &retired, &k.Seq)
	k.CreatedAt, k.RetiringAt, k.RetiredAt = time.UnixMicro(created).UTC(), fromMicros(retiring), fromMicros(retired)
	return k, notFound(err)
}
