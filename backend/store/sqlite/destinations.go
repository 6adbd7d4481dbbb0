package sqlite

import (
	"context"
	"database/sql"
	"net/netip"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// GrantDestination implements store.Store.
func (s *Store) GrantDestination(ctx context.Context, d store.WebhookDestination, e audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_destinations (id, workspace_id, prefix, port, created_at, created_by)
			VALUES (?, ?, ?, ?, ?, ?)`, d.ID, d.WorkspaceID, d.Prefix.String(), d.Port, micros(d.CreatedAt), d.CreatedBy)
		if err != nil {
			return translate(err)
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// destinationColumns are the columns scanDestination reads.
const destinationColumns = `id, workspace_id, prefix, port, created_at, created_by, revoked_at, revoked_by`

// ListDestinations implements store.Store.
func (s *Store) ListDestinations(ctx context.Context, f store.DestinationFilter) ([]store.WebhookDestination, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+destinationColumns+` FROM webhook_destinations
		WHERE (?1 = '' OR workspace_id = ?1) AND (NOT ?2 OR revoked_at IS NULL) ORDER BY created_at, id`, f.WorkspaceID, f.InForce)
	return collect(rows, err, func(rows *sql.Rows) (store.WebhookDestination, error) { return scanDestination(rows) })
}

// RevokeDestination implements store.Store.
func (s *Store) RevokeDestination(ctx context.Context, workspaceID, id, by string, e audit.Event) (store.WebhookDestination, error) {
	var d store.WebhookDestination
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		d, err = scanDestination(tx.QueryRowContext(ctx, `UPDATE webhook_destinations
			SET revoked_at = COALESCE(revoked_at, ?), revoked_by = COALESCE(revoked_by, ?)
			WHERE workspace_id = ? AND id = ? RETURNING `+destinationColumns, micros(e.At), by, workspaceID, id))
		if err != nil {
			return notFound(err)
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
	return d, err
}

// scanDestination reads a row of destinationColumns.
func scanDestination(row interface{ Scan(...any) error }) (store.WebhookDestination, error) {
	var (
		d         store.WebhookDestination
		prefix    string
		created   int64
		revoked   sql.NullInt64
		revokedBy sql.NullString
	)
	if err := row.Scan(&d.ID, &d.WorkspaceID, &prefix, &d.Port, &created, &d.CreatedBy, &revoked, &revokedBy); err != nil {
		return d, err
	}
	var err error
	d.Prefix, err = netip.ParsePrefix(prefix)
	d.CreatedAt, d.RevokedAt, d.RevokedBy = time.UnixMicro(created).UTC(), fromMicros(revoked), revokedBy.String
	return d, err
}
