package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// AppendAudit implements store.Store with store.AppendAudit. The
// transaction holds SQLite's write lock from its start, so appends are
// decided one after the other.
func (s *Store) AppendAudit(ctx context.Context, e audit.Event) (audit.Record, error) {
	var r audit.Record
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
	return r, err
}

// ListAudit implements store.Store with store.DecodeAudit.
func (s *Store) ListAudit(ctx context.Context, f store.AuditFilter) ([]audit.Record, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT `+auditColumns+` FROM audit_records
		WHERE workspace_id = ?1 AND seq > ?2
		AND (?3 IS NULL OR recorded_at >= ?3) AND (?4 IS NULL OR recorded_at < ?4)
		AND (?5 IS NULL OR entity_id = ?5 OR EXISTS (SELECT 1 FROM audit_entities e
			WHERE e.workspace_id = audit_records.workspace_id AND e.entity_id = ?5 AND e.seq = audit_records.seq))
		AND (?6 IS NULL OR client_id = ?6 OR person = ?6)
		ORDER BY seq
		LIMIT CASE WHEN ?7 > 0 THEN ?7 ELSE -1 END`,
		f.Workspace, f.After, nullMicros(f.Since), nullMicros(f.Until), nullString(f.Entity), nullString(f.Agent), f.Limit)
	list, err := collect(rows, err, scanAuditRow)
	if err != nil {
		return nil, err
	}
	return store.DecodeAudit(f, list)
}

// ListAuditNewest implements store.Store with store.DecodeAudit: for each
// chain's head, the chain's newest records f selects after f.Before, read
// on audit_records_time (workspace_id, recorded_at) by a correlated
// subquery, then the newest of them all.
func (s *Store) ListAuditNewest(ctx context.Context, f store.AuditFilter) ([]audit.Record, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT r.workspace_id, r.seq, r.body, r.recorded_at, r.client_id, r.entity_id, r.person
		FROM audit_heads h CROSS JOIN audit_records r ON r.workspace_id = h.workspace_id
		WHERE (?1 OR h.workspace_id = ?2) AND r.seq IN (
			SELECT x.seq FROM audit_records x WHERE x.workspace_id = h.workspace_id
			AND (?3 IS NULL OR x.recorded_at >= ?3) AND (?4 IS NULL OR x.recorded_at < ?4)
			AND (?5 IS NULL OR x.entity_id = ?5 OR EXISTS (SELECT 1 FROM audit_entities e
				WHERE e.workspace_id = x.workspace_id AND e.entity_id = ?5 AND e.seq = x.seq))
			AND (?6 IS NULL OR x.client_id = ?6 OR x.person = ?6)
			AND (?7 IS NULL OR x.recorded_at < ?7 OR x.recorded_at = ?7 AND (h.workspace_id > ?8 OR h.workspace_id = ?8 AND x.seq < ?9))
			ORDER BY x.recorded_at DESC, x.seq DESC LIMIT ?10)
		ORDER BY r.recorded_at DESC, r.workspace_id, r.seq DESC LIMIT ?10`,
		f.Every, f.Workspace, nullMicros(f.Since), nullMicros(f.Until), nullString(f.Entity), nullString(f.Agent),
		nullMicros(f.Before.At), f.Before.Workspace, f.Before.Seq, limitOrAll(f.Limit))
	list, err := collect(rows, err, scanAuditRow)
	if err != nil {
		return nil, err
	}
	return store.DecodeAudit(f, list)
}

// limitOrAll is a LIMIT of SQLite's: n when positive, else -1 (none).
func limitOrAll(n int) int {
	if n > 0 {
		return n
	}
	return -1
}

// auditColumns are the columns of a store.AuditRow, for scanAuditRow.
const auditColumns = `workspace_id, seq, body, recorded_at, client_id, entity_id, person`

// scanAuditRow reads the auditColumns of a row.
func scanAuditRow(rows *sql.Rows) (store.AuditRow, error) {
	var (
		r                      store.AuditRow
		at                     sql.NullInt64
		client, entity, person sql.NullString
	)
	err := rows.Scan(&r.Workspace, &r.Seq, &r.Body, &at, &client, &entity, &person)
	r.At, r.Client, r.Entity, r.Person = fromMicros(at), client.String, entity.String, person.String
	return r, err
}

// AuditHeads implements store.Store.
func (s *Store) AuditHeads(ctx context.Context) ([]audit.Head, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT workspace_id, seq, hash, pruned_seq, pruned_hash FROM audit_heads ORDER BY workspace_id`)
	return collect(rows, err, func(rows *sql.Rows) (audit.Head, error) { return scanHead(rows) })
}

// PruneAudit implements store.Store with store.PruneAudit.
func (s *Store) PruneAudit(ctx context.Context, workspace string, before, now time.Time) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
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
	err := s.tx(ctx, func(tx *sql.Tx) error {
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
	res, err := s.db.ExecContext(ctx, `UPDATE audit_records SET body = ? WHERE workspace_id = ? AND seq = ?`, string(body), workspace, seq)
	if err != nil {
		return err
	}
	return oneRow(res)
}

// DeleteAuditRecord implements storetest.Inspector.
func (s *Store) DeleteAuditRecord(ctx context.Context, workspace string, seq int64) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM audit_records WHERE workspace_id = ? AND seq = ?`, workspace, seq)
	if err != nil {
		return err
	}
	return oneRow(res)
}

// auditTx is store.PruneTx (and so store.AuditTx) in a SQLite transaction.
type auditTx struct {
	tx    *sql.Tx
	chain *audit.Chain
}

// auditTx returns tx as store.PruneTx, linking records with s's chain.
func (s *Store) auditTx(tx *sql.Tx) auditTx { return auditTx{tx: tx, chain: s.chain.Load()} }

// AuditChain implements store.AuditTx.
func (a auditTx) AuditChain() *audit.Chain { return a.chain }

// KeyAudit implements store.Store.
func (s *Store) KeyAudit(c *audit.Chain) { s.chain.Store(c) }

// AuditChain implements store.Store.
func (s *Store) AuditChain() *audit.Chain { return s.chain.Load() }

// zeroHash is the hash of an empty chain's head, in hex.
var zeroHash = hex.EncodeToString(make([]byte, len(audit.Hash{})))

// LockAuditHead needs no lock of its own: the transaction holds the
// database's. The update of the upsert only makes it return the row.
func (a auditTx) LockAuditHead(ctx context.Context, workspace string) (audit.Head, error) {
	return scanHead(a.tx.QueryRowContext(ctx, `
		INSERT INTO audit_heads (workspace_id, seq, hash, pruned_seq, pruned_hash) VALUES (?1, 0, ?2, 0, ?2)
		ON CONFLICT (workspace_id) DO UPDATE SET seq = seq
		RETURNING workspace_id, seq, hash, pruned_seq, pruned_hash`, workspace, zeroHash))
}

func (a auditTx) InsertAudit(ctx context.Context, r audit.Record, body []byte, h audit.Hash) error {
	_, err := a.tx.ExecContext(ctx,
		`INSERT INTO audit_records (workspace_id, seq, recorded_at, client_id, entity_id, person, body) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.Workspace, r.Seq, micros(r.At), nullString(r.Client), nullString(r.Entity.ID), nullString(r.Person.Name), string(body))
	if err != nil {
		return translate(err)
	}
	for _, id := range r.Replaced {
		if _, err := a.tx.ExecContext(ctx, `INSERT INTO audit_entities (workspace_id, seq, entity_id) VALUES (?, ?, ?)`,
			r.Workspace, r.Seq, id); err != nil {
			return err
		}
	}
	_, err = a.tx.ExecContext(ctx, `UPDATE audit_heads SET seq = ?, hash = ? WHERE workspace_id = ?`,
		r.Seq, h.String(), r.Workspace)
	return err
}

func (a auditTx) AuditRows(ctx context.Context, workspace string, after int64, limit int) ([]store.AuditRow, error) {
	rows, err := a.tx.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_records
		WHERE workspace_id = ? AND seq > ? ORDER BY seq LIMIT ?`, workspace, after, limit)
	return collect(rows, err, scanAuditRow)
}

func (a auditTx) DeleteAudit(ctx context.Context, workspace string, last audit.Link) (int64, error) {
	if _, err := a.tx.ExecContext(ctx, `DELETE FROM audit_entities WHERE workspace_id = ? AND seq <= ?`, workspace, last.Seq); err != nil {
		return 0, err
	}
	res, err := a.tx.ExecContext(ctx, `DELETE FROM audit_records WHERE workspace_id = ? AND seq <= ?`, workspace, last.Seq)
	if err != nil {
		return 0, err
	}
	_, err = a.tx.ExecContext(ctx, `UPDATE audit_heads SET pruned_seq = ?, pruned_hash = ? WHERE workspace_id = ?`,
		last.Seq, last.Hash.String(), workspace)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// scanHead reads a row of audit_heads.
func scanHead(row interface{ Scan(...any) error }) (audit.Head, error) {
	var (
		h            audit.Head
		last, pruned string
	)
	if err := row.Scan(&h.Workspace, &h.Last.Seq, &last, &h.Pruned.Seq, &pruned); err != nil {
		return audit.Head{}, err
	}
	var err error
	if h.Last.Hash, err = hexHash(last); err != nil {
		return audit.Head{}, err
	}
	h.Pruned.Hash, err = hexHash(pruned)
	return h, err
}

// hexHash decodes a hash column written by this package.
func hexHash(s string) (audit.Hash, error) {
	b, err := hexBytes(s)
	if err != nil {
		return audit.Hash{}, err
	}
	return audit.HashFrom(b)
}

// SetAuditColumns implements storetest.Inspector.
func (s *Store) SetAuditColumns(ctx context.Context, workspace string, seq int64, at time.Time, client string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE audit_records SET recorded_at = ?, client_id = ? WHERE workspace_id = ? AND seq = ?`,
		micros(at), nullString(client), workspace, seq)
	if err != nil {
		return err
	}
	return oneRow(res)
}
