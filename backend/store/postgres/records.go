package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// CreateRecord implements store.Store.
func (s *Store) CreateRecord(ctx context.Context, r store.Record, e audit.Event) error {
	tasks := r.Tasks
	if tasks == nil {
		tasks = []string{} // NOT NULL; pgx sends a nil slice as NULL
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
		INSERT INTO records (id, care_context_id, workspace_id, client_id, blob_key, sha1, size,
			content_type, title, tasks, status, version, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			r.ID, r.CareContextID, r.WorkspaceID, r.ClientID, r.BlobKey, r.SHA1, r.Size,
			r.ContentType, r.Title, tasks, string(r.Status), r.Version, ts(r.CreatedAt), ts(r.UpdatedAt))
		if err != nil {
			return translate(err)
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

const recordColumns = `id, care_context_id, workspace_id, client_id, blob_key, sha1, size,
	content_type, title, tasks, status, version, created_at, updated_at`

func scanRecord(row pgx.Row) (store.Record, error) {
	var (
		r      store.Record
		status string
	)
	err := row.Scan(&r.ID, &r.CareContextID, &r.WorkspaceID, &r.ClientID, &r.BlobKey, &r.SHA1, &r.Size,
		&r.ContentType, &r.Title, &r.Tasks, &status, &r.Version, &r.CreatedAt, &r.UpdatedAt)
	if err != nil {
		return store.Record{}, err
	}
	if len(r.Tasks) == 0 {
		r.Tasks = nil
	}
	r.Status = store.RecordStatus(status)
	r.CreatedAt = r.CreatedAt.UTC()
	r.UpdatedAt = r.UpdatedAt.UTC()
	return r, nil
}

// GetRecord implements store.Store.
func (s *Store) GetRecord(ctx context.Context, workspaceID, careContextID string) (store.Record, error) {
	r, err := scanRecord(s.pool.QueryRow(ctx,
		`SELECT `+recordColumns+` FROM records WHERE workspace_id = $1 AND care_context_id = $2`,
		workspaceID, careContextID))
	return r, notFound(err)
}

// AddRecordResources implements store.Store. The UPDATE locks the record's
// row, so concurrent batches for one record number their resources one
// after the other. Resources and aliases are written with COPY.
func (s *Store) AddRecordResources(ctx context.Context, careContextID string, resources []store.Resource, now time.Time, e audit.Event) (store.Record, error) {
	var r store.Record
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		r, err = scanRecord(tx.QueryRow(ctx, `
			UPDATE records SET status = $1, version = version + 1, updated_at = $2
			WHERE care_context_id = $3
			RETURNING `+recordColumns, string(store.RecordParsed), ts(now), careContextID))
		if err != nil {
			return notFound(err)
		}
		var seq int64
		err = tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM record_resources WHERE record_id = $1`, r.ID).Scan(&seq)
		if err != nil {
			return err
		}
		var rows, aliases [][]any
		for _, res := range resources {
			seq++
			rows = append(rows, []any{r.ID, seq, res.ResourceType, res.ID, res.JSON})
			for _, alias := range res.Aliases {
				aliases = append(aliases, []any{r.ID, alias, res.ID})
			}
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"record_resources"},
			[]string{"record_id", "seq", "resource_type", "resource_id", "body"}, pgx.CopyFromRows(rows))
		if err != nil {
			return translate(err)
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"record_resource_aliases"},
			[]string{"record_id", "alias", "resource_id"}, pgx.CopyFromRows(aliases))
		if err != nil {
			return translate(err)
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), store.AuditIn(e, r.WorkspaceID))
		return err
	})
	if err != nil {
		return store.Record{}, err
	}
	return r, nil
}

// ListRecordResources implements store.Store.
func (s *Store) ListRecordResources(ctx context.Context, recordID string) ([]store.Resource, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT seq, resource_type, resource_id, body FROM record_resources
		WHERE record_id = $1 ORDER BY seq`, recordID)
	return collect(rows, err, func(row pgx.Row) (store.Resource, error) {
		res := store.Resource{RecordID: recordID}
		err := row.Scan(&res.Seq, &res.ResourceType, &res.ID, &res.JSON)
		return res, err
	})
}

// RecordAliases implements store.Store.
func (s *Store) RecordAliases(ctx context.Context, careContextID string) (map[string]string, error) {
	var recordID string
	err := s.pool.QueryRow(ctx, `SELECT id FROM records WHERE care_context_id = $1`, careContextID).Scan(&recordID)
	if err != nil {
		return nil, notFound(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT alias, resource_id FROM record_resource_aliases WHERE record_id = $1`, recordID)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var alias, id string
	_, err = pgx.ForEachRow(rows, []any{&alias, &id}, func() error {
		out[alias] = id
		return nil
	})
	return out, err
}
