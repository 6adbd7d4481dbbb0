package postgres

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// EnsureWorkspace implements store.Store.
func (s *Store) EnsureWorkspace(ctx context.Context, id string, now time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx,
		`INSERT INTO workspaces (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, id, ts(now))
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// GetWorkspace implements store.Store.
func (s *Store) GetWorkspace(ctx context.Context, id string) (store.Workspace, error) {
	w := store.Workspace{ID: id}
	if err := s.pool.QueryRow(ctx, `SELECT created_at FROM workspaces WHERE id = $1`, id).Scan(&w.CreatedAt); err != nil {
		return store.Workspace{}, notFound(err)
	}
	w.CreatedAt = w.CreatedAt.UTC()
	return w, nil
}

// CreateClient implements store.Store.
func (s *Store) CreateClient(ctx context.Context, c store.Client, e audit.Event) error {
	return translate(s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx,
			`INSERT INTO clients (id, workspace_id, secret_hash, status, created_at, name, name_key, labels)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			c.ID, c.WorkspaceID, c.SecretHash, string(c.Status), ts(c.CreatedAt), c.Name, contract.FoldName(c.Name), store.LabelsJSON(c.Labels))
		if err != nil {
			return err
		}
		if err := insertLabels(ctx, tx, c); err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	}))
}

// clientColumns are a client's columns, of clients named c.
const clientColumns = `c.id, c.workspace_id, c.secret_hash, c.status, c.created_at, c.name, c.labels`

func scanClient(row pgx.Row) (store.Client, error) {
	var c store.Client
	var status, labels string
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.SecretHash, &status, &c.CreatedAt, &c.Name, &labels); err != nil {
		return store.Client{}, err
	}
	c.Status = store.ClientStatus(status)
	c.CreatedAt = c.CreatedAt.UTC()
	var err error
	c.Labels, err = store.ParseLabelsJSON(labels)
	return c, err
}

// GetClient implements store.Store.
func (s *Store) GetClient(ctx context.Context, id string) (store.Client, error) {
	c, err := scanClient(s.pool.QueryRow(ctx, `SELECT `+clientColumns+` FROM clients c WHERE id = $1`, id))
	return c, notFound(err)
}

// pgDialect is PostgreSQL's SQL for the statements the store builds.
var pgDialect = store.Dialect{
	Param:  func(n int) string { return "$" + strconv.Itoa(n) },
	Binary: ` COLLATE "C"`,
	Time:   func(t time.Time) any { return ts(t) },
}

// ListClients implements store.Store.
func (s *Store) ListClients(ctx context.Context, f store.ClientFilter) ([]store.Client, error) {
	query, args := store.ClientListSQL(pgDialect, clientColumns, f)
	rows, err := s.pool.Query(ctx, query, args...)
	return collect(rows, err, scanClient)
}

// UpdateClient implements store.Store.
func (s *Store) UpdateClient(ctx context.Context, id string, u store.ClientUpdate, e audit.Event) (store.Client, error) {
	var c store.Client
	err := s.tx(ctx, func(tx pgx.Tx) error {
		old, err := scanClient(tx.QueryRow(ctx, `SELECT `+clientColumns+` FROM clients c WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return notFound(err)
		}
		var changes []audit.Change
		if c, changes, err = u.Apply(old); err != nil || changes == nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE clients SET name = $1, name_key = $2, labels = $3 WHERE id = $4`,
			c.Name, contract.FoldName(c.Name), store.LabelsJSON(c.Labels), id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM client_labels WHERE client_id = $1`, id); err != nil {
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
func insertLabels(ctx context.Context, tx pgx.Tx, c store.Client) error {
	if len(c.Labels) == 0 {
		return nil
	}
	keys := slices.Collect(maps.Keys(c.Labels))
	values := make([]string, len(keys))
	for i, k := range keys {
		values[i] = c.Labels[k]
	}
	_, err := tx.Exec(ctx, `INSERT INTO client_labels (client_id, key, value, created_at, name_key)
		SELECT $1, k, v, $2, $3 FROM unnest($4::text[], $5::text[]) AS l (k, v)`,
		c.ID, ts(c.CreatedAt), contract.FoldName(c.Name), keys, values)
	return err
}

// ListWorkspaces implements store.Store.
func (s *Store) ListWorkspaces(ctx context.Context, after string, limit int) ([]store.Workspace, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, created_at FROM workspaces WHERE id COLLATE "C" > $1
		ORDER BY id COLLATE "C" LIMIT CASE WHEN $2 > 0 THEN $2::bigint END`, after, limit)
	return collect(rows, err, func(row pgx.Row) (store.Workspace, error) {
		var w store.Workspace
		err := row.Scan(&w.ID, &w.CreatedAt)
		w.CreatedAt = w.CreatedAt.UTC()
		return w, err
	})
}

// SetClientStatus implements store.Store.
func (s *Store) SetClientStatus(ctx context.Context, id string, status store.ClientStatus, e audit.Event) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := oneRow(tx.Exec(ctx, `UPDATE clients SET status = $1 WHERE id = $2`, string(status), id)); err != nil {
			return err
		}
		_, err := store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// CreateSharingGrant implements store.Store.
func (s *Store) CreateSharingGrant(ctx context.Context, g store.SharingGrant, e audit.Event) error {
	return translate(s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx,
			`INSERT INTO sharing_grants (id, workspace_id, client_id, key_hash, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			g.ID, g.WorkspaceID, g.ClientID, g.KeyHash, ts(g.CreatedAt), nullTS(g.RevokedAt))
		if err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	}))
}

const grantColumns = `id, workspace_id, client_id, key_hash, created_at, revoked_at`

func scanGrant(row pgx.Row) (store.SharingGrant, error) {
	var g store.SharingGrant
	var revoked pgtype.Timestamptz
	if err := row.Scan(&g.ID, &g.WorkspaceID, &g.ClientID, &g.KeyHash, &g.CreatedAt, &revoked); err != nil {
		return store.SharingGrant{}, err
	}
	g.CreatedAt = g.CreatedAt.UTC()
	g.RevokedAt = fromTS(revoked)
	return g, nil
}

// GetSharingGrantByKeyHash implements store.Store.
func (s *Store) GetSharingGrantByKeyHash(ctx context.Context, keyHash []byte) (store.SharingGrant, error) {
	g, err := scanGrant(s.pool.QueryRow(ctx, `SELECT `+grantColumns+` FROM sharing_grants WHERE key_hash = $1`, keyHash))
	return g, notFound(err)
}

// GetSharingGrant implements store.Store.
func (s *Store) GetSharingGrant(ctx context.Context, id string) (store.SharingGrant, error) {
	g, err := scanGrant(s.pool.QueryRow(ctx, `SELECT `+grantColumns+` FROM sharing_grants WHERE id = $1`, id))
	return g, notFound(err)
}

// ListSharingGrants implements store.Store.
func (s *Store) ListSharingGrants(ctx context.Context, f store.GrantFilter) ([]store.SharingGrant, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+grantColumns+` FROM sharing_grants
		WHERE ($1::text IS NULL OR workspace_id = $1) AND ($2::text IS NULL OR client_id = $2)
		AND ($3::text IS NULL OR (revoked_at IS NULL) = ($3 = 'active'))
		AND ($4::timestamptz IS NULL OR created_at > $4 OR created_at = $4 AND id COLLATE "C" > $5)
		ORDER BY created_at, id COLLATE "C"
		LIMIT CASE WHEN $6 > 0 THEN $6::bigint END`,
		nullText(f.WorkspaceID), nullText(f.ClientID), nullText(string(f.Status)), nullTS(f.After.CreatedAt), f.After.ID, f.Limit)
	return collect(rows, err, scanGrant)
}

// RevokeSharingGrant implements store.Store.
func (s *Store) RevokeSharingGrant(ctx context.Context, id string, now time.Time, e audit.Event) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := oneRow(tx.Exec(ctx,
			`UPDATE sharing_grants SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`, ts(now), id)); err != nil {
			return err
		}
		_, err := store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// ReplaceSecretHash implements store.Store.
func (s *Store) ReplaceSecretHash(ctx context.Context, clientID, old, next string) error {
	_, err := s.pool.Exec(ctx, `UPDATE clients SET secret_hash = $1 WHERE id = $2 AND secret_hash = $3`, next, clientID, old)
	return err
}

// HashKey implements store.Store.
func (s *Store) HashKey(ctx context.Context, name string, fresh []byte, now time.Time) ([]byte, error) {
	if _, err := s.pool.Exec(ctx, `INSERT INTO hash_keys (name, secret, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		name, fresh, ts(now)); err != nil {
		return nil, err
	}
	var secret []byte
	err := s.pool.QueryRow(ctx, `SELECT secret FROM hash_keys WHERE name = $1`, name).Scan(&secret)
	return secret, err
}
