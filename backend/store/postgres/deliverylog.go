package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// logQuery is the delivery log's statements in PostgreSQL's dialect.
var logQuery = store.LogQuery{Placeholder: store.PlaceholderDollar, Time: func(t time.Time) any { return ts(t) }}

// ListDeliveries implements store.Store: a keyset page on the index
// webhook_deliveries_log.
func (s *Store) ListDeliveries(ctx context.Context, f store.DeliveryFilter) ([]store.LoggedDelivery, error) {
	if err := s.subscriptionOf(ctx, s.pool, f.WorkspaceID, f.SubscriptionID, false); err != nil {
		return nil, err
	}
	sql, args := logQuery.List(f)
	rows, err := s.pool.Query(ctx, sql, args...)
	return collect(rows, err, scanLogged)
}

// DeliveryAttempts implements store.Store.
func (s *Store) DeliveryAttempts(ctx context.Context, workspaceID, subscriptionID, deliveryID string) (store.LoggedDelivery, []store.Attempt, error) {
	d, err := s.logged(ctx, s.pool, workspaceID, subscriptionID, deliveryID)
	if err != nil {
		return d, nil, err
	}
	as, err := s.ListAttempts(ctx, deliveryID)
	return d, as, err
}

// Redeliver implements store.Store.
func (s *Store) Redeliver(ctx context.Context, workspaceID, subscriptionID, deliveryID string, e audit.Event) (store.LoggedDelivery, error) {
	var d store.LoggedDelivery
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := s.subscriptionOf(ctx, tx, workspaceID, subscriptionID, true); err != nil {
			return err
		}
		if err := oneRow(tx.Exec(ctx, logQuery.RedeliverSQL(), ts(e.At), deliveryID, subscriptionID)); err != nil {
			return err
		}
		var err error
		if d, err = s.logged(ctx, tx, workspaceID, subscriptionID, deliveryID); err != nil {
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
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := s.subscriptionOf(ctx, tx, workspaceID, subscriptionID, true); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			UPDATE webhook_deliveries w SET status = 'pending', next_attempt_at = $3::timestamptz + r.n * interval '1 microsecond', finished_at = NULL,
				lease_owner = CASE WHEN w.status = 'pending' THEN w.lease_owner END,
				lease_expires_at = CASE WHEN w.status = 'pending' THEN w.lease_expires_at END
			FROM (
				SELECT d.id, ROW_NUMBER() OVER (ORDER BY d.created_at, d.id) - 1 AS n
				FROM webhook_deliveries d
				WHERE d.subscription_id = $1 AND d.created_at >= $2 AND `+store.RecoverableSQL+`
			) r
			WHERE w.id = r.id`, subscriptionID, ts(since), ts(e.At))
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		_, err = store.AppendAudit(ctx, s.auditTx(tx), e)
		return err
	})
	return int(n), err
}

// logQuerier is what the pool and a transaction share for the log.
type logQuerier interface {
	querier
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// subscriptionOf checks that the subscription is the workspace's and,
// with active, that it is active, then holding its row (FOR SHARE) until
// the transaction ends, so that it is not disabled meanwhile.
func (s *Store) subscriptionOf(ctx context.Context, q logQuerier, workspaceID, subscriptionID string, active bool) error {
	sql := `SELECT status FROM subscriptions WHERE id = $1 AND workspace_id = $2`
	if active {
		sql += ` FOR SHARE`
	}
	var status string
	err := q.QueryRow(ctx, sql, subscriptionID, workspaceID).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil || !active {
		return err
	}
	return store.ActiveSubscription(store.SubscriptionStatus(status))
}

// logged reads one delivery as the log shows it.
func (s *Store) logged(ctx context.Context, q logQuerier, workspaceID, subscriptionID, deliveryID string) (store.LoggedDelivery, error) {
	sql, args := logQuery.One(workspaceID, subscriptionID, deliveryID)
	rows, err := q.Query(ctx, sql, args...)
	ds, err := collect(rows, err, scanLogged)
	if err != nil {
		return store.LoggedDelivery{}, err
	}
	if len(ds) == 0 {
		return store.LoggedDelivery{}, store.ErrNotFound
	}
	return ds[0], nil
}

// scanLogged scans a row of a store.LogQuery statement.
func scanLogged(row pgx.Row) (store.LoggedDelivery, error) {
	var (
		d        store.LoggedDelivery
		status   string
		finished pgtype.Timestamptz
	)
	err := row.Scan(&d.ID, &d.SubscriptionID, &d.EventID, &d.EventType, &status, &d.Attempts, &d.CreatedAt, &d.NextAttemptAt, &finished, &d.LastOutcome)
	d.CreatedAt, d.NextAttemptAt = d.CreatedAt.UTC(), d.NextAttemptAt.UTC()
	return store.Logged(d, store.DeliveryStatus(status), fromTS(finished)), err
}
