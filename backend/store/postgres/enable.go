package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/backend/store"
)

// SetSubscriptionEnabled implements store.Store.
func (s *Store) SetSubscriptionEnabled(ctx context.Context, workspaceID, id string, c store.Enablement) (store.Subscription, error) {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		status, reason := "disabled", store.DisabledByClient
		if c.Enabled {
			status, reason = "active", ""
		}
		if err := oneRow(tx.Exec(ctx, `
			UPDATE subscriptions SET status = $1, disabled_reason = $2,
				failing_since = CASE WHEN $1 = 'active' THEN NULL ELSE failing_since END
			WHERE workspace_id = $3 AND id = $4`, status, reason, workspaceID, id)); err != nil {
			return err
		}
		if c.Enabled {
			// The kept deliveries go out now.
			if _, err := tx.Exec(ctx, `
				UPDATE webhook_deliveries SET next_attempt_at = $1
				WHERE subscription_id = $2 AND status = 'pending' AND next_attempt_at > $1`, ts(c.At), id); err != nil {
				return err
			}
		}
		_, err := store.AppendAudit(ctx, s.auditTx(tx), c.Event)
		return err
	})
	if err != nil {
		return store.Subscription{}, err
	}
	return s.GetSubscription(ctx, workspaceID, id)
}
