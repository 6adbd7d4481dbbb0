package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/store"
)

// RotateSigningKey implements store.Store. The right-hand sides read the
// row as it was, so the current key becomes the previous one.
func (s *Store) RotateSigningKey(ctx context.Context, workspaceID, id string, r store.SigningKeyChange) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := oneRow(tx.Exec(ctx, `
			UPDATE subscriptions SET previous_signing_key = signing_key,
				previous_key_expires_at = CASE WHEN signing_key IS NULL THEN NULL ELSE $3::timestamptz END,
				signing_key = $4
			WHERE workspace_id = $1 AND id = $2`, workspaceID, id, nullTS(r.PreviousUntil), nullText(r.Key))); err != nil {
			return err
		}
		_, err := store.AppendAudit(ctx, s.auditTx(tx), r.Event)
		return err
	})
}

// previousKey scans a subscription's previous signing key and its expiry.
type previousKey struct {
	key   pgtype.Text
	until pgtype.Timestamptz
}

// set gives sub the previous key, when there is one.
func (p previousKey) set(sub *store.Subscription) {
	if p.key.Valid {
		sub.PreviousSigningKey, sub.PreviousKeyExpiresAt = p.key.String, fromTS(p.until)
	}
}
