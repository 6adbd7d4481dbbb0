package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// logQuery is the delivery log's statements in SQLite's dialect.
var logQuery = store.LogQuery{Placeholder: store.PlaceholderQuestion, Time: func(t time.Time) any { return micros(t) }}

// logQuerier is what the database and a transaction share for the log.
type logQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ListDeliveries implements store.Store: a keyset page on the index
// webhook_deliveries_log.
func (s *Store) ListDeliveries(ctx context.Context, f store.DeliveryFilter) ([]store.LoggedDelivery, error) {
	if err := subscriptionOf(ctx, s.db, f.WorkspaceID, f.SubscriptionID, false); err != nil {
		return nil, err
	}
	q, args := logQuery.List(f)
	return queryLogged(ctx, s.db, q, args)
}

// DeliveryAttempts implements store.Store.
func (s *Store) DeliveryAttempts(ctx context.Context, workspaceID, subscriptionID, deliveryID string) (store.LoggedDelivery, []store.Attempt, error) {
	d, err := logged(ctx, s.db, workspaceID, subscriptionID, deliveryID)
	if err != nil {
		return d, nil, err
	}
	as, err := s.ListAttempts(ctx, deliveryID)
	return d, as, err
}

// Redeliver implements store.Store.
func (s *Store) Redeliver(ctx context.Context, workspaceID, subscriptionID, deliveryID string, e audit.Event) (store.LoggedDelivery, error) {
	var d store.LoggedDelivery
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := subscriptionOf(ctx, tx, workspaceID, subscriptionID, true); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, logQuery.RedeliverSQL(), micros(e.At), deliveryID, subscriptionID)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return err
		}
		if d, err = logged(ctx, tx, workspaceID, subscriptionID, deliveryID); err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
	return d, err
}

// RecoverDeliveries implements store.Store.
func (s *Store) RecoverDeliveries(ctx context.Context, workspaceID, subscriptionID string, since time.Time, e audit.Event) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := subscriptionOf(ctx, tx, workspaceID, subscriptionID, true); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `
			UPDATE webhook_deliveries AS w SET status = 'pending', next_attempt_at = ? + r.n, finished_at = NULL,
				lease_owner = CASE WHEN w.status = 'pending' THEN w.lease_owner END,
				lease_expires_at = CASE WHEN w.status = 'pending' THEN w.lease_expires_at END
			FROM (
				SELECT d.id, ROW_NUMBER() OVER (ORDER BY d.created_at, d.id) - 1 AS n
				FROM webhook_deliveries d
				WHERE d.subscription_id = ? AND d.created_at >= ? AND `+store.RecoverableSQL+`
			) AS r
			WHERE w.id = r.id`, micros(e.At), subscriptionID, micros(since))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
	return int(n), err
}

// subscriptionOf checks that the subscription is the workspace's and,
// with active, that it is active.
func subscriptionOf(ctx context.Context, q logQuerier, workspaceID, subscriptionID string, active bool) error {
	var status string
	err := q.QueryRowContext(ctx, `SELECT status FROM subscriptions WHERE id = ? AND workspace_id = ?`,
		subscriptionID, workspaceID).Scan(&status)
	if err != nil || !active {
		return notFound(err)
	}
	return store.ActiveSubscription(store.SubscriptionStatus(status))
}

// logged reads one delivery as the log shows it.
func logged(ctx context.Context, q logQuerier, workspaceID, subscriptionID, deliveryID string) (store.LoggedDelivery, error) {
	query, args := logQuery.One(workspaceID, subscriptionID, deliveryID)
	ds, err := queryLogged(ctx, q, query, args)
	if err != nil {
		return store.LoggedDelivery{}, err
	}
	if len(ds) == 0 {
		return store.LoggedDelivery{}, store.ErrNotFound
	}
	return ds[0], nil
}

// queryLogged runs a store.LogQuery statement.
func queryLogged(ctx context.Context, q logQuerier, query string, args []any) ([]store.LoggedDelivery, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.LoggedDelivery
	for rows.Next() {
		var (
			d             store.LoggedDelivery
			status        string
			created, next int64
			finished      sql.NullInt64
		)
		if err := rows.Scan(&d.ID, &d.SubscriptionID, &d.EventID, &d.EventType, &status, &d.Attempts, &created, &next, &finished, &d.LastOutcome); err != nil {
			return nil, err
		}
		d.CreatedAt, d.NextAttemptAt = time.UnixMicro(created).UTC(), time.UnixMicro(next).UTC()
		out = append(out, store.Logged(d, store.DeliveryStatus(status), fromMicros(finished)))
	}
	return out, rows.Err()
}
