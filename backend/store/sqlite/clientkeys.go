package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

const clientKeyColumns = `kid, client_id, workspace_id, secret, enc, require_fresh, status, created_at, retiring_at, retired_at, seq, last_used_at`

// AddClientKey implements store.Store.
func (s *Store) AddClientKey(ctx context.Context, k store.ClientKey, e audit.Event) (store.ClientKey, error) {
	k.Status = clientkey.Active
	err := s.keyChange(ctx, &e, func(tx *sql.Tx) error { return insertClientKey(ctx, tx, &k) })
	return k, err
}

// RotateClientKey implements store.Store.
func (s *Store) RotateClientKey(ctx context.Context, k store.ClientKey, weaken bool, e audit.Event) (store.ClientKey, error) {
	err := s.keyChange(ctx, &e, func(tx *sql.Tx) error {
		keys, err := clientKeysOf(ctx, tx, `client_id = ?`, k.ClientID)
		if err != nil {
			return err
		}
		r, err := store.Rotation(keys, k, weaken, &e)
		if err != nil {
			return err
		}
		for _, c := range r.Changed {
			if _, err := updateClientKey(ctx, tx, c); err != nil {
				return err
			}
		}
		k.Key = r.Added
		return insertClientKey(ctx, tx, &k)
	})
	return k, err
}

// RetireClientKey implements store.Store.
func (s *Store) RetireClientKey(ctx context.Context, kid string, force bool, now time.Time, e audit.Event) (store.ClientKey, error) {
	var k store.ClientKey
	err := s.keyChange(ctx, &e, func(tx *sql.Tx) error {
		keys, err := clientKeysOf(ctx, tx, `client_id = (SELECT client_id FROM client_keys WHERE kid = ?)`, kid)
		if err != nil {
			return err
		}
		var changed bool
		if k, changed, err = store.Retirement(keys, kid, force, now.Truncate(time.Microsecond)); err != nil || !changed {
			return err
		}
		k.Seq, err = updateClientKey(ctx, tx, k.Key)
		return err
	})
	return k, err
}

// clientKeysOf returns the keys of one client that where selects, in tx
// (whose writes SQLite serializes).
func clientKeysOf(ctx context.Context, tx *sql.Tx, where string, arg any) ([]store.ClientKey, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+clientKeyColumns+` FROM client_keys WHERE `+where, arg)
	return collect(rows, err, func(r *sql.Rows) (store.ClientKey, error) { return scanClientKey(r) })
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
	conds, args := f.Where()
	rows, err := s.db.QueryContext(ctx, `SELECT `+clientKeyColumns+` FROM client_keys WHERE `+strings.Join(conds, " AND ")+
		` ORDER BY kid LIMIT ?`, append(args, f.Limit)...)
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
	rows, err := s.db.QueryContext(ctx, `
		SELECT kid, '', seq FROM client_keys WHERE seq > ?1 AND seq <= ?2
		UNION ALL SELECT '', client_id, seq FROM client_limits WHERE seq > ?1 AND seq <= ?2
		ORDER BY seq LIMIT ?3`, after, last, limit)
	changes, err := collect(rows, err, func(r *sql.Rows) (clientkey.Change, error) {
		var c clientkey.Change
		return c, r.Scan(&c.Kid, &c.Client, &c.Seq)
	})
	return changes, last, err
}

// ListenClientKeys implements store.Store: SQLite has no notifications
// (the CLI changes keys from another process), so followers poll.
func (s *Store) ListenClientKeys(context.Context, func()) error { return store.ErrNoListen }

// keyChange runs change, which may complete e, and appends e, in one
// transaction.
func (s *Store) keyChange(ctx context.Context, e *audit.Event, change func(*sql.Tx) error) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := change(tx); err != nil {
			return err
		}
		_, err := store.AppendAudit(ctx, s.auditTx(tx), *e)
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
	_, err = tx.ExecContext(ctx, `INSERT INTO client_keys (`+clientKeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.Kid, k.ClientID, k.WorkspaceID, k.Secret, k.Enc, k.RequireFresh, k.Status, micros(k.CreatedAt), nullMicros(k.RetiringAt), nullMicros(k.RetiredAt), seq,
		nullMicros(k.LastUsedAt))
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
	var retiring, retired, used sql.NullInt64
	err := row.Scan(&k.Kid, &k.ClientID, &k.WorkspaceID, &k.Secret, &k.Enc, &k.RequireFresh, &k.Status, &created, &retiring, &retired, &k.Seq, &used)
	k.CreatedAt, k.RetiringAt, k.RetiredAt = time.UnixMicro(created).UTC(), fromMicros(retiring), fromMicros(retired)
	k.LastUsedAt = fromMicros(used)
	return k, notFound(err)
}
