package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// CreateSubscription implements store.Store. With a limit, the
// workspace's row is locked first (FOR NO KEY UPDATE, which does not hold
// up inserts that merely reference the workspace), so that concurrent
// creations in one workspace, on any replica, count one after the other.
func (s *Store) CreateSubscription(ctx context.Context, sub store.Subscription, max int, e audit.Event) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if max > 0 {
			// Two statements: the count must see the snapshot taken once
			// the lock is held.
			var n int
			err := tx.QueryRow(ctx, `SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE`, sub.WorkspaceID).Scan(&n)
			if err != nil {
				return notFound(err)
			}
			err = tx.QueryRow(ctx, `SELECT COUNT(*) FROM subscriptions WHERE workspace_id = $1`, sub.WorkspaceID).Scan(&n)
			if err != nil {
				return err
			}
			if n >= max {
				return store.ErrLimit
			}
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO subscriptions (id, workspace_id, endpoint, protocol, signing_key, status, created_at,
				last_delivery_at, last_delivery_outcome, delivery_format)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			sub.ID, sub.WorkspaceID, sub.Endpoint, sub.Protocol, nullText(sub.SigningKey), string(sub.Status),
			ts(sub.CreatedAt), nullTS(sub.LastDeliveryAt), nullText(sub.LastDeliveryOutcome), sub.Format())
		if err != nil {
			return translate(err)
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO subscription_events (subscription_id, event_name)
			SELECT $1, name FROM unnest($2::text[]) AS name`, sub.ID, sub.EventNames)
		if err != nil {
			return translate(err)
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}

// subscriptionsAfter is the condition of a list of subscriptions on the
// indexes subscriptions_created and subscriptions_workspace_created: of
// workspace $1 (NULL for any) and status $2 (NULL for any), after the
// position $3, $4 (NULL: from the first). subscriptionsAfterArgs are its
// arguments.
const subscriptionsAfter = `($1::text IS NULL OR workspace_id = $1) AND ($2::text IS NULL OR status = $2)
	AND ($3::timestamptz IS NULL OR created_at > $3 OR created_at = $3 AND id COLLATE "C" > $4)`

func subscriptionsAfterArgs(f store.SubscriptionFilter) []any {
	return []any{nullText(f.WorkspaceID), nullText(string(f.Status)), nullTS(f.After.CreatedAt), f.After.ID}
}

// ListSubscriptions implements store.Store.
func (s *Store) ListSubscriptions(ctx context.Context, f store.SubscriptionFilter) ([]store.Subscription, error) {
	return s.subscriptions(ctx, `WHERE s.id IN (SELECT id FROM subscriptions
		WHERE `+subscriptionsAfter+` AND (NOT $5::boolean OR `+store.FailingSQL+`)
		AND ($6::timestamptz IS NULL OR created_at < $6 OR created_at = $6 AND id COLLATE "C" <= $7)
		ORDER BY created_at, id COLLATE "C" LIMIT CASE WHEN $8 > 0 THEN $8::bigint END)`,
		append(subscriptionsAfterArgs(f), f.Failing, nullTS(f.Through.CreatedAt), f.Through.ID, f.Limit)...)
}

// SubscriptionWindow implements store.Store: the n-th subscription and
// the one after it, if any.
func (s *Store) SubscriptionWindow(ctx context.Context, f store.SubscriptionFilter, n int) (store.Cursor, bool, error) {
	rows, err := s.pool.Query(ctx, `SELECT created_at, id FROM subscriptions WHERE `+subscriptionsAfter+`
		ORDER BY created_at, id COLLATE "C" LIMIT 2 OFFSET $5`, append(subscriptionsAfterArgs(f), n-1)...)
	ends, err := collect(rows, err, func(row pgx.Row) (store.Cursor, error) {
		var c store.Cursor
		err := row.Scan(&c.CreatedAt, &c.ID)
		c.CreatedAt = c.CreatedAt.UTC()
		return c, err
	})
	if err != nil || len(ends) < 2 {
		return store.Cursor{}, false, err
	}
	return ends[0], true, nil
}

// GetSubscription implements store.Store.
func (s *Store) GetSubscription(ctx context.Context, workspaceID, id string) (store.Subscription, error) {
	subs, err := s.subscriptions(ctx, `WHERE ($1::text = '' OR s.workspace_id = $1) AND s.id = $2`, workspaceID, id)
	if err != nil {
		return store.Subscription{}, err
	}
	if len(subs) == 0 {
		return store.Subscription{}, store.ErrNotFound
	}
	return subs[0], nil
}

// subscriptions reads the subscriptions matching where, with their event
// names in ascending order, in creation order.
func (s *Store) subscriptions(ctx context.Context, where string, args ...any) ([]store.Subscription, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT s.id, s.workspace_id, s.endpoint, s.protocol, s.signing_key, s.status, s.created_at,
			s.last_delivery_at, s.last_delivery_outcome, s.delivery_format, s.previous_signing_key, s.previous_key_expires_at, s.disabled_reason, s.failing_since,
			ARRAY(SELECT e.event_name FROM subscription_events e WHERE e.subscription_id = s.id ORDER BY e.event_name COLLATE "C")
		FROM subscriptions s
		`+where+`
		ORDER BY s.created_at, s.id COLLATE "C"`, args...)
	return collect(rows, err, func(row pgx.Row) (store.Subscription, error) {
		var (
			sub           store.Subscription
			key, outcome  pgtype.Text
			status        string
			last, failing pgtype.Timestamptz
			prev          previousKey
		)
		err := row.Scan(&sub.ID, &sub.WorkspaceID, &sub.Endpoint, &sub.Protocol, &key, &status, &sub.CreatedAt,
			&last, &outcome, &sub.DeliveryFormat, &prev.key, &prev.until, &sub.DisabledReason, &failing, &sub.EventNames)
		if err != nil {
			return store.Subscription{}, err
		}
		if len(sub.EventNames) == 0 {
			sub.EventNames = nil
		}
		sub.SigningKey = key.String
		sub.Status = store.SubscriptionStatus(status)
		sub.CreatedAt = sub.CreatedAt.UTC()
		sub.LastDeliveryAt = fromTS(last)
		sub.LastDeliveryOutcome = outcome.String
		prev.set(&sub)
		sub.FailingSince = fromTS(failing)
		return sub, nil
	})
}

// DeleteSubscription implements store.Store.
func (s *Store) DeleteSubscription(ctx context.Context, workspaceID, id string, e audit.Event) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := oneRow(tx.Exec(ctx, `DELETE FROM subscriptions WHERE workspace_id = $1 AND id = $2`, workspaceID, id)); err != nil {
			return err
		}
		_, err := store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
}
