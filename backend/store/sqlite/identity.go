package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// EnsureWorkspace implements store.Store.
func (s *Store) EnsureWorkspace(ctx context.Context, id string, now time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx,
		`INSERT INTO workspaces (id, created_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`, id, micros(now))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// GetWorkspace implements store.Store.
func (s *Store) GetWorkspace(ctx context.Context, id string) (store.Workspace, error) {
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT created_at FROM workspaces WHERE id = ?`, id).Scan(&created)
	if err != nil {
		return store.Workspace{}, notFound(err)
	}
	return store.Workspace{ID: id, CreatedAt: time.UnixMicro(created).UTC()}, nil
}

// CreateClient implements store.Store.
func (s *Store) CreateClient(ctx context.Context, c store.Client, e audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO clients (id, workspace_id, secret_hash, status, created_at, name, name_key, labels)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.WorkspaceID, c.SecretHash, string(c.Status), micros(c.CreatedAt), c.Name, contract.FoldName(c.Name), store.LabelsJSON(c.Labels))
		if err != nil {
			return translate(err)
		}
		if err := insertLabels(ctx, tx, c); err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// clientColumns are a client's columns, of clients named c.
const clientColumns = `c.id, c.workspace_id, c.secret_hash, c.status, c.created_at, c.name, c.labels`

func scanClient(row interface{ Scan(...any) error }) (store.Client, error) {
	var c store.Client
	var status, labels string
	var created int64
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.SecretHash, &status, &created, &c.Name, &labels); err != nil {
		return store.Client{}, err
	}
	c.Status = store.ClientStatus(status)
	c.CreatedAt = time.UnixMicro(created).UTC()
	var err error
	c.Labels, err = store.ParseLabelsJSON(labels)
	return c, err
}

// GetClient implements store.Store.
func (s *Store) GetClient(ctx context.Context, id string) (store.Client, error) {
	c, err := scanClient(s.db.QueryRowContext(ctx, `SELECT `+clientColumns+` FROM clients c WHERE id = ?`, id))
	return c, notFound(err)
}

// sqliteDialect is SQLite's SQL for the statements the store builds.
var sqliteDialect = store.Dialect{
	Param: func(n int) string { return "?" + strconv.Itoa(n) },
	Time:  func(t time.Time) any { return micros(t) },
}

// ListClients implements store.Store.
func (s *Store) ListClients(ctx context.Context, f store.ClientFilter) ([]store.Client, error) {
	query, args := store.ClientListSQL(sqliteDialect, clientColumns, f)
	rows, err := s.db.QueryContext(ctx, query, args...)
	return collect(rows, err, func(rows *sql.Rows) (store.Client, error) { return scanClient(rows) })
}

// UpdateClient implements store.Store.
func (s *Store) UpdateClient(ctx context.Context, id string, u store.ClientUpdate, e audit.Event) (store.Client, error) {
	var c store.Client
	err := s.tx(ctx, func(tx *sql.Tx) error {
		old, err := scanClient(tx.QueryRowContext(ctx, `SELECT `+clientColumns+` FROM clients c WHERE id = ?`, id))
		if err != nil {
			return notFound(err)
		}
		var changes []audit.Change
		if c, changes, err = u.Apply(old); err != nil || changes == nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE clients SET name = ?, name_key = ?, labels = ? WHERE id = ?`,
			c.Name, contract.FoldName(c.Name), store.LabelsJSON(c.Labels), id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM client_labels WHERE client_id = ?`, id); err != nil {
			return err
		}
		if err := insertLabels(ctx, tx, c); err != nil {
			return err
		}
		e.Changes = changes
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
	return c, err
}

// insertLabels stores c's labels, a row each, for the searches by label.
func insertLabels(ctx context.Context, tx *sql.Tx, c store.Client) error {
	if len(c.Labels) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO client_labels (client_id, key, value, created_at, name_key)
		SELECT ?1, key, value, ?2, ?3 FROM json_each(?4)`, c.ID, micros(c.CreatedAt), contract.FoldName(c.Name), store.LabelsJSON(c.Labels))
	return err
}

// ListWorkspaces implements store.Store.
func (s *Store) ListWorkspaces(ctx context.Context, after string, limit int) ([]store.Workspace, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, created_at FROM workspaces WHERE id > ?
		ORDER BY id LIMIT CASE WHEN ?2 > 0 THEN ?2 ELSE -1 END`, after, limit)
	return collect(rows, err, func(rows *sql.Rows) (store.Workspace, error) {
		var w store.Workspace
		var created int64
		err := rows.Scan(&w.ID, &created)
		w.CreatedAt = time.UnixMicro(created).UTC()
		return w, err
	})
}

// SetClientStatus implements store.Store.
func (s *Store) SetClientStatus(ctx context.Context, id string, status store.ClientStatus, e audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE clients SET status = ? WHERE id = ?`, string(status), id)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// CreateSharingGrant implements store.Store.
func (s *Store) CreateSharingGrant(ctx context.Context, g store.SharingGrant, e audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO sharing_grants (id, workspace_id, client_id, key_hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)`,
			g.ID, g.WorkspaceID, g.ClientID, hex.EncodeToString(g.KeyHash), micros(g.CreatedAt), nullMicros(g.RevokedAt))
		if err != nil {
			return translate(err)
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

const grantColumns = `id, workspace_id, client_id, key_hash, created_at, revoked_at`

func scanGrant(row interface{ Scan(...any) error }) (store.SharingGrant, error) {
	var g store.SharingGrant
	var keyHash string
	var created int64
	var revoked sql.NullInt64
	if err := row.Scan(&g.ID, &g.WorkspaceID, &g.ClientID, &keyHash, &created, &revoked); err != nil {
		return store.SharingGrant{}, err
	}
	var err error
	if g.KeyHash, err = hexBytes(keyHash); err != nil {
		return store.SharingGrant{}, err
	}
	g.CreatedAt = time.UnixMicro(created).UTC()
	g.RevokedAt = fromMicros(revoked)
	return g, nil
}

// GetSharingGrantByKeyHash implements store.Store.
func (s *Store) GetSharingGrantByKeyHash(ctx context.Context, keyHash []byte) (store.SharingGrant, error) {
	g, err := scanGrant(s.db.QueryRowContext(ctx,
		`SELECT `+grantColumns+` FROM sharing_grants WHERE key_hash = ?`, hex.EncodeToString(keyHash)))
	return g, notFound(err)
}

// GetSharingGrant implements store.Store.
func (s *Store) GetSharingGrant(ctx context.Context, id string) (store.SharingGrant, error) {
	g, err := scanGrant(s.db.QueryRowContext(ctx, `SELECT `+grantColumns+` FROM sharing_grants WHERE id = ?`, id))
	return g, notFound(err)
}

// ListSharingGrants implements store.Store.
func (s *Store) ListSharingGrants(ctx context.Context, f store.GrantFilter) ([]store.SharingGrant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+grantColumns+` FROM sharing_grants
		WHERE (?1 IS NULL OR workspace_id = ?1) AND (?2 IS NULL OR client_id = ?2)
		AND (?3 IS NULL OR (revoked_at IS NULL) = (?3 = 'active'))
		AND (?4 IS NULL OR created_at > ?4 OR created_at = ?4 AND id > ?5)
		ORDER BY created_at, id
		LIMIT CASE WHEN ?6 > 0 THEN ?6 ELSE -1 END`,
		nullString(f.WorkspaceID), nullString(f.ClientID), nullString(string(f.Status)), nullMicros(f.After.CreatedAt), f.After.ID, f.Limit)
	return collect(rows, err, func(rows *sql.Rows) (store.SharingGrant, error) { return scanGrant(rows) })
}

// RevokeSharingGrant implements store.Store.
func (s *Store) RevokeSharingGrant(ctx context.Context, id string, now time.Time, e audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE sharing_grants SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, micros(now), id)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// oneRow turns an update that matched no row into store.ErrNotFound.
func oneRow(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ReplaceSecretHash implements store.Store.
func (s *Store) ReplaceSecretHash(ctx context.Context, clientID, old, next string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE clients SET secret_hash = ? WHERE id = ? AND secret_hash = ?`, next, clientID, old)
	return err
}

// HashKey implements store.Store.
func (s *Store) HashKey(ctx context.Context, name string, fresh []byte, now time.Time) ([]byte, error) {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO hash_keys (name, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		name, hex.EncodeToString(fresh), micros(now)); err != nil {
		return nil, err
	}
	var secret string
	if err := s.db.QueryRowContext(ctx, `SELECT secret FROM hash_keys WHERE name = ?`, name).Scan(&secret); err != nil {
		return nil, err
	}
	return hexBytes(secret)
}
