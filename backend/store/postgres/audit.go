package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// AppendAudit implements store.Store with store.AppendAudit. The chain's
// head row is locked first (LockAuditHead), so that appends to one
// workspace, on any replicas, are decided one after the other.
func (s *Store) AppendAudit(ctx context.Context, e audit.Event) (audit.Record, error) {
	var r audit.Record
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		r, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
	return r, err
}

// ListAudit implements store.Store with store.DecodeAudit.
func (s *Store) ListAudit(ctx context.Context, f store.AuditFilter) ([]audit.Record, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+auditColumns+` FROM audit_records
		WHERE workspace_id = $1 AND seq > $2
		AND ($3::timestamptz IS NULL OR recorded_at >= $3) AND ($4::timestamptz IS NULL OR recorded_at < $4)
		AND ($5::text IS NULL OR entity_id = $5 OR EXISTS (SELECT 1 FROM audit_entities e
			WHERE e.workspace_id = audit_records.workspace_id AND e.entity_id = $5 AND e.seq = audit_records.seq))
		AND ($6::text IS NULL OR client_id = $6 OR person = $6)
		ORDER BY seq
		LIMIT CASE WHEN $7 > 0 THEN $7::bigint END`,
		f.Workspace, f.After, nullTS(f.Since), nullTS(f.Until), nullText(f.Entity), nullText(f.Agent), f.Limit)
	list, err := collect(rows, err, scanAuditRow)
	if err != nil {
		return nil, err
	}
	return store.DecodeAudit(f, list)
}

// ListAuditNewest implements store.Store with store.DecodeAudit: for each
// chain's head, the chain's newest records f selects after f.Before, read
// on audit_records_time (workspace_id, recorded_at) by a lateral
// subquery, then the newest of them all. Workspaces compare bytewise
// (COLLATE "C"), as store.AuditPlace compares them.
func (s *Store) ListAuditNewest(ctx context.Context, f store.AuditFilter) ([]audit.Record, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT r.* FROM audit_heads h CROSS JOIN LATERAL (
			SELECT `+auditColumns+` FROM audit_records x WHERE x.workspace_id = h.workspace_id
			AND ($3::timestamptz IS NULL OR x.recorded_at >= $3) AND ($4::timestamptz IS NULL OR x.recorded_at < $4)
			AND ($5::text IS NULL OR x.entity_id = $5 OR EXISTS (SELECT 1 FROM audit_entities e
				WHERE e.workspace_id = x.workspace_id AND e.entity_id = $5 AND e.seq = x.seq))
			AND ($6::text IS NULL OR x.client_id = $6 OR x.person = $6)
			AND ($7::timestamptz IS NULL OR x.recorded_at < $7 OR x.recorded_at = $7 AND
				(h.workspace_id COLLATE "C" > $8 OR h.workspace_id = $8 AND x.seq < $9))
			ORDER BY x.recorded_at DESC, x.seq DESC LIMIT CASE WHEN $10 > 0 THEN $10::bigint END) r
		WHERE ($1 OR h.workspace_id = $2)
		ORDER BY r.recorded_at DESC, r.workspace_id COLLATE "C", r.seq DESC LIMIT CASE WHEN $10 > 0 THEN $10::bigint END`,
		f.Every, f.Workspace, nullTS(f.Since), nullTS(f.Until), nullText(f.Entity), nullText(f.Agent),
		nullTS(f.Before.At), f.Before.Workspace, f.Before.Seq, f.Limit)
	list, err := collect(rows, err, scanAuditRow)
	if err != nil {
		return nil, err
	}
	return store.DecodeAudit(f, list)
}

// auditColumns are the columns of a store.AuditRow, for scanAuditRow.
const auditColumns = `workspace_id, seq, body, recorded_at, client_id, entity_id, person`

// scanAuditRow reads the auditColumns of a row.
func scanAuditRow(row pgx.Row) (store.AuditRow, error) {
	var (
		r                      store.AuditRow
		client, entity, person pgtype.Text
	)
	err := row.Scan(&r.Workspace, &r.Seq, &r.Body, &r.At, &client, &entity, &person)
	r.Client, r.Entity, r.Person = client.String, entity.String, person.String
	return r, err
}

// AuditHeads implements store.Store.
func (s *Store) AuditHeads(ctx context.Context) ([]audit.Head, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT workspace_id, seq, hash, pruned_seq, pruned_hash FROM audit_heads ORDER BY workspace_id`)
	return collect(rows, err, scanHead)
}

// PruneAudit implements store.Store with store.PruneAudit.
func (s *Store) PruneAudit(ctx context.Context, workspace string, before, now time.Time) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		n, err = store.PruneAudit(ctx, s.auditTx(tx), workspace, before, now)
		return err
	})
	return n, err
}

// AppendAuditThen implements storetest.Inspector: e is appended with
// store.AppendAudit in the transaction that then runs in, as a change
// would record itself.
func (s *Store) AppendAuditThen(ctx context.Context, e audit.Event, then func() error) (audit.Record, error) {
	var r audit.Record
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		if r, err = store.AppendAudit(ctx, s.auditTx(tx), e); err != nil {
			return err
		}
		return then()
	})
	return r, err
}

// SetAuditBody implements storetest.Inspector.
func (s *Store) SetAuditBody(ctx context.Context, workspace string, seq int64, body []byte) error {
	return oneRow(s.pool.Exec(ctx, `UPDATE audit_records SET body = $1 WHERE workspace_id = $2 AND seq = $3`, body, workspace, seq))
}

// DeleteAuditRecord implements storetest.Inspector.
func (s *Store) DeleteAuditRecord(ctx context.Context, workspace string, seq int64) error {
	return oneRow(s.pool.Exec(ctx, `DELETE FROM audit_records WHERE workspace_id = $1 AND seq = $2`, workspace, seq))
}

// auditTx is store.PruneTx (and so store.AuditTx) in a PostgreSQL
// transaction.
type auditTx struct {
	tx    pgx.Tx
	chain *audit.Chain
}

// auditTx returns tx as store.PruneTx, linking records with s's chain.
func (s *Store) auditTx(tx pgx.Tx) auditTx { return auditTx{tx: tx, chain: s.chain.Load()} }

// AuditChain implements store.AuditTx.
func (a auditTx) AuditChain() *audit.Chain { return a.chain }

// KeyAudit implements store.Store.
func (s *Store) KeyAudit(c *audit.Chain) { s.chain.Store(c) }

// AuditChain implements store.Store.
func (s *Store) AuditChain() *audit.Chain { return s.chain.Load() }

// LockAuditHead creates the head or, when it exists, locks its row with a
// no-op update (ON CONFLICT DO UPDATE waits for another transaction
// holding it, then returns the row as that one left it).
func (a auditTx) LockAuditHead(ctx context.Context, workspace string) (audit.Head, error) {
	return scanHead(a.tx.QueryRow(ctx, `
		INSERT INTO audit_heads (workspace_id, seq, hash, pruned_seq, pruned_hash) VALUES ($1, 0, $2, 0, $2)
		ON CONFLICT (workspace_id) DO UPDATE SET seq = audit_heads.seq
		RETURNING workspace_id, seq, hash, pruned_seq, pruned_hash`, workspace, make([]byte, len(audit.Hash{}))))
}

func (a auditTx) InsertAudit(ctx context.Context, r audit.Record, body []byte, h audit.Hash) error {
	_, err := a.tx.Exec(ctx,
		`INSERT INTO audit_records (workspace_id, seq, recorded_at, client_id, entity_id, person, body) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.Workspace, r.Seq, ts(r.At), nullText(r.Client), nullText(r.Entity.ID), nullText(r.Person.Name), body)
	if err != nil {
		return translate(err)
	}
	for _, id := range r.Replaced {
		if _, err := a.tx.Exec(ctx, `INSERT INTO audit_entities (workspace_id, seq, entity_id) VALUES ($1, $2, $3)`,
			r.Workspace, r.Seq, id); err != nil {
			return err
		}
	}
	_, err = a.tx.Exec(ctx, `UPDATE audit_heads SET seq = $1, hash = $2 WHERE workspace_id = $3`, r.Seq, h[:], r.Workspace)
	return err
}

func (a auditTx) AuditRows(ctx context.Context, workspace string, after int64, limit int) ([]store.AuditRow, error) {
	rows, err := a.tx.Query(ctx, `SELECT `+auditColumns+` FROM audit_records
		WHERE workspace_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, workspace, after, limit)
	return collect(rows, err, scanAuditRow)
}

func (a auditTx) DeleteAudit(ctx context.Context, workspace string, last audit.Link) (int64, error) {
	if _, err := a.tx.Exec(ctx, `DELETE FROM audit_entities WHERE workspace_id = $1 AND seq <= $2`, workspace, last.Seq); err != nil {
		return 0, err
	}
	tag, err := a.tx.Exec(ctx, `DELETE FROM audit_records WHERE workspace_id = $1 AND seq <= $2`, workspace, last.Seq)
	if err != nil {
		return 0, err
	}
	_, err = a.tx.Exec(ctx, `UPDATE audit_heads SET pruned_seq = $1, pruned_hash = $2 WHERE workspace_id = $3`,
		last.Seq, last.Hash[:], workspace)
	return tag.RowsAffected(), err
}

// scanHead reads a row of audit_heads.
func scanHead(row pgx.Row) (audit.Head, error) {
	var (
		h            audit.Head
		last, pruned []byte
	)
	if err := row.Scan(&h.Workspace, &h.Last.Seq, &last, &h.Pruned.Seq, &pruned); err != nil {
		return audit.Head{}, err
	}
	var err error
	if h.Last.Hash, err = audit.HashFrom(last); err != nil {
		return audit.Head{}, err
	}
	h.Pruned.Hash, err = audit.HashFrom(pruned)
	return h, err
}

// SetAuditColumns implements storetest.Inspector.
func (s *Store) SetAuditColumns(ctx context.Context, workspace string, seq int64, at time.Time, client string) error {
	return oneRow(s.pool.Exec(ctx, `UPDATE audit_records SET recorded_at = $1, client_id = $2 WHERE workspace_id = $3 AND seq = $4`,
		ts(at), nullText(client), workspace, seq))
}
