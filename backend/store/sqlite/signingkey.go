package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// RotateSigningKey implements store.Store. The right-hand sides read the
// row as it was, so the current key becomes the previous one.
func (s *Store) RotateSigningKey(ctx context.Context, workspaceID, id, key string, previousUntil time.Time) error {
	res, err := s.db.ExecContext(ctx, `
		UPDATE subscriptions SET previous_signing_key = signing_key,
			previous_key_expires_at = CASE WHEN signing_key IS NULL THEN NULL ELSE ? END,
			signing_key = ?
		WHERE workspace_id = ? AND id = ?`, nullMicros(previousUntil), nullString(key), workspaceID, id)
	if err != nil {
		return err
	}
	return oneRow(res)
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
