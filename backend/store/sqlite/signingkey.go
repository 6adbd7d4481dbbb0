package sqlite

import (
	"context"
	"database/sql"

	"github.com/health-data-connect/hdc/backend/store"
)

// RotateSigningKey implements store.Store. The right-hand sides read the
// row as it was, so the current key becomes the previous one.
func (s *Store) RotateSigningKey(ctx context.Context, workspaceID, id string, r store.SigningKeyChange) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
			UPDATE subscriptions SET previous_signing_key = signing_key,
				previous_key_expires_at = CASE WHEN signing_key IS NULL THEN NULL ELSE ? END,
				signing_key = ?
			WHERE workspace_id = ? AND id = ?`, nullMicros(r.PreviousUntil), nullString(r.Key), workspaceID, id)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), r.Event)
		return err
	})
}

// previousKey scans a subscription's previous signing key and its expiry.
type previousKey struct {
	key   sql.NullString
	until sql.NullInt64
}

// set gives sub the previous key, when there is one.
func (p previousKey) set(sub *store.Subscription) {
	if p.key.Valid {
		sub.PreviousSigningKey, sub.PreviousKeyExpiresAt = p.key.String, fromMicros(p.until)
	}
}
