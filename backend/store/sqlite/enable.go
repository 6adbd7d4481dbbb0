package sqlite

import (
	"context"
	"database/sql"

	"github.com/health-data-connect/hdc/backend/store"
)

// SetSubscriptionEnabled implements store.Store.
func (s *Store) SetSubscriptionEnabled(ctx context.Context, workspaceID, id string, c store.Enablement) (store.Subscription, error) {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		status, reason := "disabled", store.DisabledByClient
		if c.Enabled {
			status, reason = "active", ""
		}
		res, err := tx.ExecContext(ctx, `
			UPDATE subscriptions SET status = ?1, disabled_reason = ?2,
				failing_since = CASE WHEN ?1 = 'active' THEN NULL ELSE failing_since END
			WHERE workspace_id = ?3 AND id = ?4`, status, reason, workspaceID, id)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return err
		}
		if c.Enabled {
			// The kept deliveries go out now.
			if _, err := tx.ExecContext(ctx, `
				UPDATE webhook_deliveries SET next_attempt_at = ?
				WHERE subscription_id = ? AND status = 'pending' AND next_attempt_at > ?`,
				micros(c.At), id, micros(c.At)); err != nil {
				return err
			}
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), c.Event)
		return err
	})
	if err != nil {
		return store.Subscription{}, err
	}
	return s.GetSubscription(ctx, workspaceID, id)
}
