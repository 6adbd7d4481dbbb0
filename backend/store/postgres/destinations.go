package postgres

import (
	"context"
	"net/netip"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// GrantDestination implements store.Store.
func (s *Store) GrantDestination(ctx context.Context, d store.WebhookDestination, e audit.Event) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO webhook_destinations (id, workspace_id, prefix, port, created_at, created_by)
			VALUES ($1, $2, $3, $4, $5, $6)`, d.ID, d.WorkspaceID, d.Prefix.String(), int32(d.Port), ts(d.CreatedAt), d.CreatedBy)
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
	rows, err := s.pool.Query(ctx, `SELECT `+destinationColumns+` FROM webhook_destinations
		WHERE ($1 = '' OR workspace_id = $1) AND (NOT $2 OR revoked_at IS NULL) ORDER BY created_at, id COLLATE "C"`, f.WorkspaceID, f.InForce)
	return collect(rows, err, scanDestination)
}

// RevokeDestination implements store.Store.
func (s *Store) RevokeDestination(ctx context.Context, workspaceID, id, by string, e audit.Event) (store.WebhookDestination, error) {
	var d store.WebhookDestination
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		d, err = scanDestination(tx.QueryRow(ctx, `UPDATE webhook_destinations
			SET revoked_at = COALESCE(revoked_at, $3), revoked_by = COALESCE(revoked_by, $4)
			WHERE workspace_id = $1 AND id = $2 RETURNING `+destinationColumns, workspaceID, id, ts(e.At), by))
		if err != nil {
			return notFound(err)
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
	return d, err
}

// scanDestination reads a row of destinationColumns.
func scanDestination(row pgx.Row) (store.WebhookDestination, error) {
	var (
		d         store.WebhookDestination
		prefix    string
		port      int32
		revoked   pgtype.Timestamptz
		revokedBy pgtype.Text
	)
	if err := row.Scan(&d.ID, &d.WorkspaceID, &prefix, &port, &d.CreatedAt, &d.CreatedBy, &revoked, &revokedBy); err != nil {
		return d, err
	}
	var err error
	d.Prefix, err = netip.ParsePrefix(prefix)
	d.Port, d.CreatedAt, d.RevokedAt, d.RevokedBy = uint16(port), d.CreatedAt.UTC(), fromTS(revoked), revokedBy.String
	return d, err
}
