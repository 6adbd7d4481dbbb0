package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// keyChannel is the channel each key change notifies at its commit. The
// notice carries nothing: a follower reads the changes by number.
const keyChannel = "hdc_client_keys"

const clientKeyColumns = `kid, client_id, workspace_id, secret, enc, require_fresh, status, created_at, retiring_at, retired_at, seq, last_used_at`

// AddClientKey implements store.Store.
func (s *Store) AddClientKey(ctx context.Context, k store.ClientKey, e audit.Event) (store.ClientKey, error) {
	k.Status = clientkey.Active
	err := s.keyChange(ctx, &e, func(tx pgx.Tx) error { return insertClientKey(ctx, tx, &k) })
	return k, err
}

// RotateClientKey implements store.Store.
func (s *Store) RotateClientKey(ctx context.Context, k store.ClientKey, weaken bool, e audit.Event) (store.ClientKey, error) {
	err := s.keyChange(ctx, &e, func(tx pgx.Tx) error {
		keys, err := clientKeysOf(ctx, tx, `client_id = $1`, k.ClientID)
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
	err := s.keyChange(ctx, &e, func(tx pgx.Tx) error {
		keys, err := clientKeysOf(ctx, tx, `client_id = (SELECT client_id FROM client_keys WHERE kid = $1)`, kid)
		if err != nil {
			return err
		}
		var changed bool
		if k, changed, err = store.Retirement(keys, kid, force, ts(now)); err != nil || !changed {
			return err
		}
		k.Seq, err = updateClientKey(ctx, tx, k.Key)
		return err
	})
	return k, err
}

// clientKeysOf returns the keys of one client that where selects, locked
// until tx ends, so that concurrent changes of the client's keys are
// decided one after the other. The rows are locked in kid order, as an
// edge's report locks those it raises (ReportEdge), so that neither waits
// for the other in a cycle.
func clientKeysOf(ctx context.Context, tx pgx.Tx, where string, arg any) ([]store.ClientKey, error) {
	rows, err := tx.Query(ctx, `SELECT `+clientKeyColumns+` FROM client_keys WHERE `+where+` ORDER BY kid FOR UPDATE`, arg)
	return collect(rows, err, func(r pgx.Row) (store.ClientKey, error) { return scanClientKey(r) })
}

// ImportClientKeys implements store.Store.
func (s *Store) ImportClientKeys(ctx context.Context, keys []store.ClientKey, events []audit.Event) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		for i := range keys {
			if err := insertClientKey(ctx, tx, &keys[i]); err != nil {
				return err
			}
			if _, err := store.AppendAudit(ctx, s.auditTx(tx), events[i]); err != nil {
				return err
			}
		}
		return notifyKeys(ctx, tx)
	})
}

// ClientKey implements store.Store.
func (s *Store) ClientKey(ctx context.Context, kid string) (store.ClientKey, error) {
	return scanClientKey(s.pool.QueryRow(ctx, `SELECT `+clientKeyColumns+` FROM client_keys WHERE kid = $1`, kid))
}

// ListClientKeys implements store.Store.
func (s *Store) ListClientKeys(ctx context.Context, f store.ClientKeyFilter) ([]store.ClientKey, error) {
	conds, args := f.Where()
	for i := range conds {
		conds[i] = strings.Replace(conds[i], "?", "$"+strconv.Itoa(i+2), 1)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+clientKeyColumns+` FROM client_keys WHERE `+strings.Join(conds, " AND ")+
		` ORDER BY kid LIMIT $1`, append([]any{f.Limit}, args...)...)
	keys, err := collect(rows, err, func(r pgx.Row) (store.ClientKey, error) { return scanClientKey(r) })
	for i := range keys {
		keys[i].Secret = ""
	}
	return keys, err
}

// ClientKeyChanges implements store.Store.
func (s *Store) ClientKeyChanges(ctx context.Context, after int64, limit int) ([]clientkey.Change, int64, error) {
	var last int64
	var changes []clientkey.Change
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT seq FROM key_plane`).Scan(&last); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			SELECT kid, '', seq FROM client_keys WHERE seq > $1
			UNION ALL SELECT '', client_id, seq FROM client_limits WHERE seq > $1
			ORDER BY seq LIMIT $2`, after, limit)
		changes, err = collect(rows, err, func(r pgx.Row) (clientkey.Change, error) {
			var c clientkey.Change
			return c, r.Scan(&c.Kid, &c.Client, &c.Seq)
		})
		return err
	})
	return changes, last, err
}

// ListenClientKeys implements store.Store with LISTEN on a connection of
// its own.
func (s *Store) ListenClientKeys(ctx context.Context, notify func()) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection listens: it goes, not back to the pool.
	pc := conn.Hijack()
	defer pc.Close(context.Background())
	if _, err := pc.Exec(ctx, `LISTEN `+keyChannel); err != nil {
		return err
	}
	for {
		if _, err := pc.WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		notify()
	}
}

// keyChange runs change, which may complete e, appends e and notifies the
// followers, in one transaction.
func (s *Store) keyChange(ctx context.Context, e *audit.Event, change func(pgx.Tx) error) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := change(tx); err != nil {
			return err
		}
		if _, err := store.AppendAudit(ctx, s.auditTx(tx), *e); err != nil {
			return err
		}
		return notifyKeys(ctx, tx)
	})
}

// notifyKeys notifies keyChannel when tx commits.
func notifyKeys(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, keyChannel)
	return err
}

// insertClientKey stores k with the next sequence number, which it sets.
func insertClientKey(ctx context.Context, tx pgx.Tx, k *store.ClientKey) error {
	seq, err := nextKeySeq(ctx, tx)
	if err != nil {
		return err
	}
	k.Seq = seq
	_, err = tx.Exec(ctx, `INSERT INTO client_keys (`+clientKeyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		k.Kid, k.ClientID, k.WorkspaceID, k.Secret, k.Enc, k.RequireFresh, string(k.Status), ts(k.CreatedAt), nullTS(k.RetiringAt), nullTS(k.RetiredAt), seq,
		nullTS(k.LastUsedAt))
	return translate(err)
}

// updateClientKey stores k's status and dates with the next sequence
// number, which it returns.
func updateClientKey(ctx context.Context, tx pgx.Tx, k clientkey.Key) (int64, error) {
	seq, err := nextKeySeq(ctx, tx)
	if err != nil {
		return 0, err
	}
	_, err = tx.Exec(ctx, `UPDATE client_keys SET status = $1, retiring_at = $2, retired_at = $3, seq = $4 WHERE kid = $5`,
		string(k.Status), nullTS(k.RetiringAt), nullTS(k.RetiredAt), seq, k.Kid)
	return seq, err
}

// nextKeySeq takes the key plane's next sequence number. The row stays
// locked until tx ends, so numbers commit in the order they are taken.
func nextKeySeq(ctx context.Context, tx pgx.Tx) (int64, error) {
	var seq int64
	err := tx.QueryRow(ctx, `UPDATE key_plane SET seq = seq + 1 RETURNING seq`).Scan(&seq)
	return seq, err
}

func scanClientKey(row pgx.Row) (store.ClientKey, error) {
	var k store.ClientKey
	var created, retiring, retired, used pgtype.Timestamptz
	err := row.Scan(&k.Kid, &k.ClientID, &k.WorkspaceID, &k.Secret, &k.Enc, &k.RequireFresh, &k.Status, &created, &retiring, &retired, &k.Seq, &used)
	k.CreatedAt, k.RetiringAt, k.RetiredAt, k.LastUsedAt = fromTS(created), fromTS(retiring), fromTS(retired), fromTS(used)
	return k, notFound(err)
}
