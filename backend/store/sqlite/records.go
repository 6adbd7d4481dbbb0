package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// CreateRecord implements store.Store.
func (s *Store) CreateRecord(ctx context.Context, r store.Record, e audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
		INSERT INTO records (id, care_context_id, workspace_id, client_id, blob_key, sha1, size,
			content_type, title, tasks, status, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.CareContextID, r.WorkspaceID, r.ClientID, r.BlobKey, hex.EncodeToString(r.SHA1), r.Size,
			r.ContentType, r.Title, strings.Join(r.Tasks, " "), string(r.Status), r.Version,
			micros(r.CreatedAt), micros(r.UpdatedAt))
		if err != nil {
			return translate(err)
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

const recordColumns = `id, care_context_id, workspace_id, client_id, blob_key, sha1, size,
	content_type, title, tasks, status, version, created_at, updated_at`

func scanRecord(row interface{ Scan(...any) error }) (store.Record, error) {
	var (
		r                store.Record
		sha1, tasks      string
		status           string
		created, updated int64
	)
	err := row.Scan(&r.ID, &r.CareContextID, &r.WorkspaceID, &r.ClientID, &r.BlobKey, &sha1, &r.Size,
		&r.ContentType, &r.Title, &tasks, &status, &r.Version, &created, &updated)
	if err != nil {
		return store.Record{}, err
	}
	if r.SHA1, err = hexBytes(sha1); err != nil {
		return store.Record{}, err
	}
	r.Tasks = strings.Fields(tasks)
	r.Status = store.RecordStatus(status)
	r.CreatedAt = time.UnixMicro(created).UTC()
	r.UpdatedAt = time.UnixMicro(updated).UTC()
	return r, nil
}

// GetRecord implements store.Store.
func (s *Store) GetRecord(ctx context.Context, workspaceID, careContextID string) (store.Record, error) {
	r, err := scanRecord(s.db.QueryRowContext(ctx,
		`SELECT `+recordColumns+` FROM records WHERE workspace_id = ? AND care_context_id = ?`,
		workspaceID, careContextID))
	return r, notFound(err)
}

// AddRecordResources implements store.Store.
func (s *Store) AddRecordResources(ctx context.Context, careContextID string, resources []store.Resource, now time.Time, e audit.Event) (store.Record, error) {
	var r store.Record
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
			UPDATE records SET status = ?, version = version + 1, updated_at = ?
			WHERE care_context_id = ?`, string(store.RecordParsed), micros(now), careContextID)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return err
		}
		r, err = scanRecord(tx.QueryRowContext(ctx,
			`SELECT `+recordColumns+` FROM records WHERE care_context_id = ?`, careContextID))
		if err != nil {
			return err
		}
		var seq int64
		err = tx.QueryRowContext(ctx,
			`SELECT COALESCE(MAX(seq), 0) FROM record_resources WHERE record_id = ?`, r.ID).Scan(&seq)
		if err != nil {
			return err
		}
		for _, res := range resources {
			seq++
			_, err := tx.ExecContext(ctx, `
				INSERT INTO record_resources (record_id, seq, resource_type, resource_id, body)
				VALUES (?, ?, ?, ?, ?)`, r.ID, seq, res.ResourceType, res.ID, string(res.JSON))
			if err != nil {
				return translate(err)
			}
			for _, alias := range res.Aliases {
				_, err := tx.ExecContext(ctx, `
					INSERT INTO record_resource_aliases (record_id, alias, resource_id) VALUES (?, ?, ?)`,
					r.ID, alias, res.ID)
				if err != nil {
					return translate(err)
				}
			}
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
	rows, err := s.db.QueryContext(ctx, `
		SELECT seq, resource_type, resource_id, body FROM record_resources
		WHERE record_id = ? ORDER BY seq`, recordID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Resource
	for rows.Next() {
		res := store.Resource{RecordID: recordID}
		var body string
		if err := rows.Scan(&res.Seq, &res.ResourceType, &res.ID, &body); err != nil {
			return nil, err
		}
		res.JSON = []byte(body)
		out = append(out, res)
	}
	return out, rows.Err()
}

// RecordAliases implements store.Store.
func (s *Store) RecordAliases(ctx context.Context, careContextID string) (map[string]string, error) {
	var recordID string
	err := s.db.QueryRowContext(ctx, `SELECT id FROM records WHERE care_context_id = ?`, careContextID).Scan(&recordID)
	if err != nil {
		return nil, notFound(err)
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT alias, resource_id FROM record_resource_aliases WHERE record_id = ?`, recordID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var alias, id string
		if err := rows.Scan(&alias, &id); err != nil {
			return nil, err
		}
		out[alias] = id
	}
	return out, rows.Err()
}
