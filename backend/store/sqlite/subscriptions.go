package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// CreateSubscription implements store.Store. Transactions take the write
// lock at BEGIN, so the count cannot change before the insert.
func (s *Store) CreateSubscription(ctx context.Context, sub store.Subscription, max int, e audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if max > 0 {
			var n int
			err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM subscriptions WHERE workspace_id = ?`, sub.WorkspaceID).Scan(&n)
			if err != nil {
				return err
			}
			if n >= max {
				return store.ErrLimit
			}
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO subscriptions (id, workspace_id, endpoint, protocol, signing_key, status, created_at,
				last_delivery_at, last_delivery_outcome, delivery_format)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sub.ID, sub.WorkspaceID, sub.Endpoint, sub.Protocol, nullString(sub.SigningKey), string(sub.Status),
			micros(sub.CreatedAt), nullMicros(sub.LastDeliveryAt), nullString(sub.LastDeliveryOutcome), sub.Format())
		if err != nil {
			return translate(err)
		}
		for _, name := range sub.EventNames {
			_, err := tx.ExecContext(ctx,
				`INSERT INTO subscription_events (subscription_id, event_name) VALUES (?, ?)`, sub.ID, name)
			if err != nil {
				return translate(err)
			}
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// subscriptionsAfter is the condition of a list of subscriptions on the
// indexes subscriptions_created and subscriptions_workspace_created: of
// workspace ?1 (NULL for any) and status ?2 (NULL for any), after the
// position ?3, ?4 (NULL: from the first). subscriptionsAfterArgs are its
// arguments.
const subscriptionsAfter = `(?1 IS NULL OR workspace_id = ?1) AND (?2 IS NULL OR status = ?2)
	AND (?3 IS NULL OR created_at > ?3 OR created_at = ?3 AND id > ?4)`

func subscriptionsAfterArgs(f store.SubscriptionFilter) []any {
	return []any{nullString(f.WorkspaceID), nullString(string(f.Status)), nullMicros(f.After.CreatedAt), f.After.ID}
}

// ListSubscriptions implements store.Store.
func (s *Store) ListSubscriptions(ctx context.Context, f store.SubscriptionFilter) ([]store.Subscription, error) {
	return s.subscriptions(ctx, `WHERE s.id IN (SELECT id FROM subscriptions
		WHERE `+subscriptionsAfter+` AND (NOT ?5 OR `+store.FailingSQL+`)
		AND (?6 IS NULL OR created_at < ?6 OR created_at = ?6 AND id <= ?7)
		ORDER BY created_at, id LIMIT CASE WHEN ?8 > 0 THEN ?8 ELSE -1 END)`,
		append(subscriptionsAfterArgs(f), f.Failing, nullMicros(f.Through.CreatedAt), f.Through.ID, f.Limit)...)
}

// SubscriptionWindow implements store.Store: the n-th subscription and
// the one after it, if any.
func (s *Store) SubscriptionWindow(ctx context.Context, f store.SubscriptionFilter, n int) (store.Cursor, bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT created_at, id FROM subscriptions WHERE `+subscriptionsAfter+`
		ORDER BY created_at, id LIMIT 2 OFFSET ?5`, append(subscriptionsAfterArgs(f), n-1)...)
	ends, err := collect(rows, err, func(rows *sql.Rows) (store.Cursor, error) {
		var (
			c       store.Cursor
			created int64
		)
		err := rows.Scan(&created, &c.ID)
		c.CreatedAt = time.UnixMicro(created).UTC()
		return c, err
	})
	if err != nil || len(ends) < 2 {
		return store.Cursor{}, false, err
	}
	return ends[0], true, nil
}

// GetSubscription implements store.Store.
func (s *Store) GetSubscription(ctx context.Context, workspaceID, id string) (store.Subscription, error) {
	subs, err := s.subscriptions(ctx, `WHERE (?1 = '' OR s.workspace_id = ?1) AND s.id = ?2`, workspaceID, id)
	if err != nil {
		return store.Subscription{}, err
	}
	if len(subs) == 0 {
		return store.Subscription{}, store.ErrNotFound
	}
	return subs[0], nil
}

// subscriptions reads the subscriptions matching where, with their event
// names, in creation order.
func (s *Store) subscriptions(ctx context.Context, where string, args ...any) ([]store.Subscription, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT s.id, s.workspace_id, s.endpoint, s.protocol, s.signing_key, s.status, s.created_at,
			s.last_delivery_at, s.last_delivery_outcome, s.delivery_format, s.previous_signing_key, s.previous_key_expires_at, s.disabled_reason, s.failing_since,
			e.event_name
		FROM subscriptions s LEFT JOIN subscription_events e ON e.subscription_id = s.id
		`+where+`
		ORDER BY s.created_at, s.id, e.event_name`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Subscription
	for rows.Next() {
		var (
			sub                store.Subscription
			key, outcome, name sql.NullString
			status             string
			created            int64
			last, failing      sql.NullInt64
			prev               previousKey
		)
		err := rows.Scan(&sub.ID, &sub.WorkspaceID, &sub.Endpoint, &sub.Protocol, &key, &status, &created,
			&last, &outcome, &sub.DeliveryFormat, &prev.key, &prev.until, &sub.DisabledReason, &failing, &name)
		if err != nil {
			return nil, err
		}
		if n := len(out); n == 0 || out[n-1].ID != sub.ID {
			sub.SigningKey = key.String
			sub.Status = store.SubscriptionStatus(status)
			sub.CreatedAt = time.UnixMicro(created).UTC()
			sub.LastDeliveryAt = fromMicros(last)
			sub.LastDeliveryOutcome = outcome.String
			prev.set(&sub)
			sub.FailingSince = fromMicros(failing)
			out = append(out, sub)
		}
		if name.Valid {
			out[len(out)-1].EventNames = append(out[len(out)-1].EventNames, name.String)
		}
	}
	return out, rows.Err()
}

// DeleteSubscription implements store.Store.
func (s *Store) DeleteSubscription(ctx context.Context, workspaceID, id string, e audit.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM subscriptions WHERE workspace_id = ? AND id = ?`, workspaceID, id)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}
