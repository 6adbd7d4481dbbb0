package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/backend/store"
)

// BeatBackend implements store.Store.
func (s *Store) BeatBackend(ctx context.Context, b store.FleetBackend) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM fleet_backends WHERE host = $1 AND address = $2 AND id <> $3`, b.Host, b.Address, b.ID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO fleet_backends (id, host, version, address, started_at, last_seen)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO UPDATE SET host = excluded.host, version = excluded.version, address = excluded.address,
				started_at = excluded.started_at, last_seen = excluded.last_seen`,
			b.ID, b.Host, b.Version, b.Address, ts(b.StartedAt), ts(b.LastSeen))
		return err
	})
}

// raiseLastUse raises the last use of the keys of $1 to the times of $2
// in one statement. It locks the rows it raises in kid order, as the key
// changes lock a client's keys (clientKeysOf), so that two reports, or a
// report and a change, never wait for each other in a cycle; greatest
// keeps a newer use another report committed meanwhile.
const raiseLastUse = `WITH used AS (
		SELECT kid, max(at) AS at FROM unnest($1::text[], $2::timestamptz[]) AS u(kid, at) GROUP BY kid
	), raised AS (
		SELECT k.kid, used.at FROM client_keys k JOIN used ON used.kid = k.kid
		WHERE k.last_used_at IS NULL OR k.last_used_at < used.at
		ORDER BY k.kid FOR UPDATE OF k
	)
	UPDATE client_keys k SET last_used_at = greatest(k.last_used_at, raised.at) FROM raised WHERE k.kid = raised.kid`

// ReportEdge implements store.Store. The row of e's ID is replaced only
// while its certificate's name is e's: ON CONFLICT decides it against
// the row as committed, so two reports of one new ID under two names
// cannot both be taken. The reports of one name from one address take
// turns under a transaction-scoped advisory lock: two edges there, each
// removing the other's row, would otherwise wait for each other.
func (s *Store) ReportEdge(ctx context.Context, e store.FleetEdge, uses []store.KeyUse) error {
	kids, times := make([]string, len(uses)), make([]time.Time, len(uses))
	for i, u := range uses {
		kids[i], times[i] = u.Kid, ts(u.At)
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, edgeLocks, e.Name+" "+e.Source); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM fleet_edges WHERE cert_name = $1 AND source = $2 AND id <> $3`, e.Name, e.Source, e.ID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO fleet_edges (id, cert_serial, cert_name, applied_seq, last_contact, source)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO UPDATE SET cert_serial = excluded.cert_serial, applied_seq = excluded.applied_seq,
				last_contact = excluded.last_contact, source = excluded.source
			WHERE fleet_edges.cert_name = excluded.cert_name`,
			e.ID, e.Serial, e.Name, e.AppliedSeq, ts(e.LastContact), e.Source)
		switch {
		case err != nil:
			return err
		case tag.RowsAffected() == 0:
			return store.ErrOtherEdge
		case len(uses) == 0:
			return nil
		}
		_, err = tx.Exec(ctx, raiseLastUse, kids, times)
		return err
	})
}

// edgeLocks is the space of the advisory locks of edges' reports ("hdce"
// in ASCII), keyed by the hash of a name and an address: two keys of 32
// bits, a space apart from the 64-bit keys of claims and migrations.
const edgeLocks = 0x68646365

// ListBackends implements store.Store.
func (s *Store) ListBackends(ctx context.Context) ([]store.FleetBackend, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, host, version, address, started_at, last_seen FROM fleet_backends ORDER BY id`)
	return collect(rows, err, func(r pgx.Row) (store.FleetBackend, error) {
		var b store.FleetBackend
		err := r.Scan(&b.ID, &b.Host, &b.Version, &b.Address, &b.StartedAt, &b.LastSeen)
		b.StartedAt, b.LastSeen = b.StartedAt.UTC(), b.LastSeen.UTC()
		return b, err
	})
}

// ListEdges implements store.Store.
func (s *Store) ListEdges(ctx context.Context) ([]store.FleetEdge, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, cert_serial, cert_name, applied_seq, last_contact, source FROM fleet_edges ORDER BY id`)
	return collect(rows, err, func(r pgx.Row) (store.FleetEdge, error) {
		var e store.FleetEdge
		err := r.Scan(&e.ID, &e.Serial, &e.Name, &e.AppliedSeq, &e.LastContact, &e.Source)
		e.LastContact = e.LastContact.UTC()
		return e, err
	})
}

// ForgetFleet implements store.Store.
func (s *Store) ForgetFleet(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		n = 0
		for _, del := range []string{`DELETE FROM fleet_backends WHERE last_seen < $1`, `DELETE FROM fleet_edges WHERE last_contact < $1`} {
			tag, err := tx.Exec(ctx, del, ts(before))
			if err != nil {
				return err
			}
			n += tag.RowsAffected()
		}
		return nil
	})
	return n, err
}
