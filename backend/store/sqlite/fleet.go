package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// BeatBackend implements store.Store.
func (s *Store) BeatBackend(ctx context.Context, b store.FleetBackend) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM fleet_backends WHERE host = ? AND address = ? AND id <> ?`, b.Host, b.Address, b.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO fleet_backends (id, host, version, address, started_at, last_seen)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET host = excluded.host, version = excluded.version, address = excluded.address,
				started_at = excluded.started_at, last_seen = excluded.last_seen`,
			b.ID, b.Host, b.Version, b.Address, micros(b.StartedAt), micros(b.LastSeen))
		return err
	})
}

// ReportEdge implements store.Store. The row of e's ID is replaced only
// while its certificate's name is e's; the uses travel as one JSON array
// of [kid, time] pairs, which json_each reads in the statement.
func (s *Store) ReportEdge(ctx context.Context, e store.FleetEdge, uses []store.KeyUse) error {
	pairs := make([][2]any, len(uses))
	for i, u := range uses {
		pairs[i] = [2]any{u.Kid, micros(u.At)}
	}
	batch, err := json.Marshal(pairs)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM fleet_edges WHERE cert_name = ? AND source = ? AND id <> ?`, e.Name, e.Source, e.ID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO fleet_edges (id, cert_serial, cert_name, applied_seq, last_contact, source)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET cert_serial = excluded.cert_serial, applied_seq = excluded.applied_seq,
				last_contact = excluded.last_contact, source = excluded.source
			WHERE fleet_edges.cert_name = excluded.cert_name`,
			e.ID, e.Serial, e.Name, e.AppliedSeq, micros(e.LastContact), e.Source)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmp.Or(err, store.ErrOtherEdge)
		}
		if len(uses) == 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE client_keys SET last_used_at = used.at
			FROM (SELECT value ->> 0 AS kid, max(value ->> 1) AS at FROM json_each(?) GROUP BY 1) AS used
			WHERE client_keys.kid = used.kid AND (client_keys.last_used_at IS NULL OR client_keys.last_used_at < used.at)`, string(batch))
		return err
	})
}

// ListBackends implements store.Store.
func (s *Store) ListBackends(ctx context.Context) ([]store.FleetBackend, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, host, version, address, started_at, last_seen FROM fleet_backends ORDER BY id`)
	return collect(rows, err, func(r *sql.Rows) (store.FleetBackend, error) {
		var b store.FleetBackend
		var started, seen int64
		err := r.Scan(&b.ID, &b.Host, &b.Version, &b.Address, &started, &seen)
		b.StartedAt, b.LastSeen = time.UnixMicro(started).UTC(), time.UnixMicro(seen).UTC()
		return b, err
	})
}

// ListEdges implements store.Store.
func (s *Store) ListEdges(ctx context.Context) ([]store.FleetEdge, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, cert_serial, cert_name, applied_seq, last_contact, source FROM fleet_edges ORDER BY id`)
	return collect(rows, err, func(r *sql.Rows) (store.FleetEdge, error) {
		var e store.FleetEdge
		var contact int64
		err := r.Scan(&e.ID, &e.Serial, &e.Name, &e.AppliedSeq, &contact, &e.Source)
		e.LastContact = time.UnixMicro(contact).UTC()
		return e, err
	})
}

// ForgetFleet implements store.Store.
func (s *Store) ForgetFleet(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, del := range []string{`DELETE FROM fleet_backends WHERE last_seen < ?`, `DELETE FROM fleet_edges WHERE last_contact < ?`} {
			res, err := tx.ExecContext(ctx, del, micros(before))
			if err != nil {
				return err
			}
			removed, _ := res.RowsAffected()
			n += removed
		}
		return nil
	})
	return n, err
}
