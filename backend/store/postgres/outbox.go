package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/health-data-connect/hdc/backend/store"
)

// PublishEvent implements store.Store. The fan-out is one INSERT … SELECT
// over the subscriptions selecting the event, so it sees exactly the
// subscriptions that exist when the transaction commits.
func (s *Store) PublishEvent(ctx context.Context, e store.Event) ([]string, error) {
	var ids []string
	err := s.tx(ctx, func(tx pgx.Tx) (err error) {
		ids, err = publish(ctx, tx, e)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// publish stores e and its deliveries in tx.
func publish(ctx context.Context, tx pgx.Tx, e store.Event) ([]string, error) {
	_, err := tx.Exec(ctx,
		`INSERT INTO webhook_events (id, workspace_id, type, data, created_at, trace_parent) VALUES ($1, $2, $3, $4, $5, $6)`,
		e.ID, e.WorkspaceID, e.Type, e.Data, ts(e.CreatedAt), e.TraceParent)
	if err != nil {
		return nil, translate(err)
	}
	rows, err := tx.Query(ctx, `
		INSERT INTO webhook_deliveries (id, event_id, subscription_id, status, attempts, created_at, next_attempt_at)
		SELECT replace(gen_random_uuid()::text, '-', ''), $1, s.id, 'pending', 0, $2, $2
		FROM subscriptions s JOIN subscription_events se ON se.subscription_id = s.id
		WHERE s.workspace_id = $3 AND s.status = 'active' AND se.event_name = $4
		RETURNING id`,
		e.ID, ts(e.CreatedAt), e.WorkspaceID, e.Type)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// ClaimDeliveries implements store.Store with store.ClaimDue.
func (s *Store) ClaimDeliveries(ctx context.Context, c store.Claim) ([]store.Delivery, error) {
	return store.ClaimDue(ctx, claimer{s}, c)
}

// claimer is the PostgreSQL side of store.ClaimDue.
type claimer struct{ s *Store }

// AnyDue implements store.ClaimEngine.
func (cl claimer) AnyDue(ctx context.Context, now time.Time) (bool, error) {
	var due bool
	err := cl.s.pool.QueryRow(ctx, anyDueSQL, ts(now)).Scan(&due)
	return due, err
}

// ClaimLocked implements store.ClaimEngine. Claims take turns, under a
// transaction-scoped advisory lock, so that the count of leases per
// workspace is exact: FOR UPDATE SKIP LOCKED cannot be combined with the
// window function that ranks each workspace's deliveries.
func (cl claimer) ClaimLocked(ctx context.Context, c store.Claim) ([]store.Delivery, error) {
	var out []store.Delivery
	err := cl.s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, claimLock); err != nil {
			return err
		}
		var err error
		out, err = queryDeliveries(ctx, tx, `WITH d AS (`+claimSQL+` RETURNING *)`, `ORDER BY d.next_attempt_at, d.id`,
			c.Owner, ts(c.LeaseUntil), ts(c.Now), c.PerWorkspace, c.Limit)
		return err
	})
	return out, err
}

// claimLock is the advisory lock key of claims ("hdc-claim" in ASCII).
const claimLock = 0x6864632d636c61

// anyDueSQL tells whether a delivery is due at $1 and not under lease.
const anyDueSQL = `
	SELECT EXISTS (SELECT 1 FROM webhook_deliveries
		WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_expires_at IS NULL OR lease_expires_at <= $1)
			AND subscription_id IN (SELECT id FROM subscriptions WHERE status = 'active'))`

// claimSQL leases ($1 until $2) the deliveries due at $3 in turns across
// workspaces: turn is a delivery's rank among its workspace's due ones,
// busy the workspace's unexpired leases, $4 the cap on both together (none
// when not positive) and $5 the most deliveries taken. The outer
// conditions are checked again on a row another transaction changed.
const claimSQL = `
	UPDATE webhook_deliveries SET lease_owner = $1, lease_expires_at = $2
	WHERE status = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at <= $3) AND id IN (
		SELECT due.id FROM (
			SELECT d.id, d.next_attempt_at, e.workspace_id,
				ROW_NUMBER() OVER (PARTITION BY e.workspace_id ORDER BY d.next_attempt_at, d.id) AS turn
			FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
				JOIN subscriptions s ON s.id = d.subscription_id AND s.status = 'active'
			WHERE d.status = 'pending' AND d.next_attempt_at <= $3
				AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $3)
		) due LEFT JOIN (
			SELECT e.workspace_id, COUNT(*) AS n
			FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
			WHERE d.status = 'pending' AND d.lease_expires_at > $3
			GROUP BY e.workspace_id
		) busy ON busy.workspace_id = due.workspace_id
		WHERE $4 <= 0 OR due.turn + COALESCE(busy.n, 0) <= $4
		ORDER BY due.turn, due.next_attempt_at, due.id
		LIMIT $5)`

// FinishAttempt implements store.Store with store.Finish.
func (s *Store) FinishAttempt(ctx context.Context, owner string, a store.Attempt, next store.Next) error {
	return s.tx(ctx, func(tx pgx.Tx) error { return store.Finish(ctx, attemptTx{s.auditTx(tx)}, owner, a, next) })
}

// attemptTx is store.AttemptTx in a PostgreSQL transaction. The delivery's
// row is locked (FOR UPDATE) while the attempt is recorded, so a claim
// cannot take it meanwhile.
type attemptTx struct{ auditTx }

func (t attemptTx) LockLeased(ctx context.Context, deliveryID, owner string) (store.LeasedDelivery, error) {
	var d store.LeasedDelivery
	err := t.tx.QueryRow(ctx, `
		SELECT subscription_id, attempts, next_attempt_at FROM webhook_deliveries
		WHERE id = $1 AND status = 'pending' AND lease_owner = $2
		FOR UPDATE`, deliveryID, owner).
		Scan(&d.SubscriptionID, &d.Attempts, &d.NextAttemptAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, store.ErrLeaseLost
	}
	d.NextAttemptAt = d.NextAttemptAt.UTC()
	return d, err
}

func (t attemptTx) InsertAttempt(ctx context.Context, a store.Attempt, n int) error {
	_, err := t.tx.Exec(ctx, `
		INSERT INTO webhook_attempts (delivery_id, number, started_at, duration_us, outcome, status_code, response_body)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		a.DeliveryID, n, ts(a.StartedAt), a.Duration.Microseconds(), a.Outcome, a.StatusCode, a.ResponseBody)
	return err
}

func (t attemptTx) UpdateDelivery(ctx context.Context, u store.DeliveryUpdate) error {
	_, err := t.tx.Exec(ctx, `
		UPDATE webhook_deliveries
		SET status = $1, attempts = $2, next_attempt_at = $3, lease_owner = NULL, lease_expires_at = NULL, finished_at = $4
		WHERE id = $5`,
		string(u.Status), u.Attempts, ts(u.NextAttemptAt), nullTS(u.FinishedAt), u.ID)
	return err
}

func (t attemptTx) NoteLastDelivery(ctx context.Context, subscriptionID string, start time.Time, outcome string) error {
	_, err := t.tx.Exec(ctx, `
		UPDATE subscriptions SET last_delivery_at = $1, last_delivery_outcome = $2
		WHERE id = $3 AND (last_delivery_at IS NULL OR last_delivery_at <= $1)`,
		ts(start), outcome, subscriptionID)
	return err
}

func (t attemptTx) NoteFailing(ctx context.Context, subscriptionID string, start time.Time, failed bool) (time.Time, error) {
	var since pgtype.Timestamptz
	err := t.tx.QueryRow(ctx, `
		UPDATE subscriptions SET failing_since = CASE WHEN $1 THEN COALESCE(failing_since, $2) END
		WHERE id = $3 RETURNING failing_since`, failed, ts(start), subscriptionID).Scan(&since)
	return fromTS(since), err
}

func (t attemptTx) DisableSubscription(ctx context.Context, subscriptionID, reason string) (bool, error) {
	tag, err := t.tx.Exec(ctx,
		`UPDATE subscriptions SET status = 'disabled', disabled_reason = $1 WHERE id = $2 AND status = 'active'`, reason, subscriptionID)
	return tag.RowsAffected() == 1, err
}

func (t attemptTx) Publish(ctx context.Context, e store.Event) error {
	_, err := publish(ctx, t.tx, e)
	return err
}

// ReleaseDelivery implements store.Store.
func (s *Store) ReleaseDelivery(ctx context.Context, owner, deliveryID string) error {
	err := oneRow(s.pool.Exec(ctx, `
		UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL
		WHERE id = $1 AND status = 'pending' AND lease_owner = $2`, deliveryID, owner))
	if errors.Is(err, store.ErrNotFound) {
		return store.ErrLeaseLost
	}
	return err
}

// GetDelivery implements storetest.Inspector.
func (s *Store) GetDelivery(ctx context.Context, id string) (store.Delivery, error) {
	ds, err := queryDeliveries(ctx, s.pool,
		`WITH d AS (SELECT * FROM webhook_deliveries WHERE id = $1)`, ``, id)
	if err != nil {
		return store.Delivery{}, err
	}
	if len(ds) == 0 {
		return store.Delivery{}, store.ErrNotFound
	}
	return ds[0], nil
}

// ListAttempts implements storetest.Inspector; DeliveryAttempts reads
// the attempts with it.
func (s *Store) ListAttempts(ctx context.Context, deliveryID string) ([]store.Attempt, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT number, started_at, duration_us, outcome, status_code, response_body FROM webhook_attempts
		WHERE delivery_id = $1 ORDER BY number`, deliveryID)
	return collect(rows, err, func(row pgx.Row) (store.Attempt, error) {
		a := store.Attempt{DeliveryID: deliveryID}
		var duration int64
		err := row.Scan(&a.Number, &a.StartedAt, &duration, &a.Outcome, &a.StatusCode, &a.ResponseBody)
		a.StartedAt = a.StartedAt.UTC()
		a.Duration = time.Duration(duration) * time.Microsecond
		return a, err
	})
}

// OutboxStats implements store.Store.
func (s *Store) OutboxStats(ctx context.Context) (store.OutboxStats, error) {
	var (
		st     store.OutboxStats
		oldest pgtype.Timestamptz
	)
	err := s.pool.QueryRow(ctx,
		`SELECT COUNT(*), MIN(created_at) FROM webhook_deliveries
			WHERE status = 'pending' AND subscription_id IN (SELECT id FROM subscriptions WHERE status = 'active')`).Scan(&st.Pending, &oldest)
	st.OldestPending = fromTS(oldest)
	return st, err
}

// PruneOutbox implements store.Store.
func (s *Store) PruneOutbox(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			DELETE FROM webhook_deliveries WHERE status <> 'pending' AND finished_at < $1
				OR status = 'pending' AND created_at < $1
					AND subscription_id IN (SELECT id FROM subscriptions WHERE status = 'disabled')`, ts(before))
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		_, err = tx.Exec(ctx, `
			DELETE FROM webhook_events e
			WHERE e.created_at < $1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`,
			ts(before))
		return err
	})
	return n, err
}

// PruneAttempts implements store.Store.
func (s *Store) PruneAttempts(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_attempts WHERE started_at < $1`, ts(before))
	return tag.RowsAffected(), err
}

// querier is what the pool and a transaction share.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryDeliveries reads the deliveries that the common table expression
// with (which defines d, with the columns of webhook_deliveries) selects,
// ordered by order, with their events and subscriptions.
func queryDeliveries(ctx context.Context, q querier, with, order string, args ...any) ([]store.Delivery, error) {
	rows, err := q.Query(ctx, with+`
		SELECT d.id, d.status, d.attempts, d.created_at, d.next_attempt_at, d.lease_owner, d.lease_expires_at, d.finished_at,
			e.id, e.workspace_id, e.type, e.data, e.created_at, e.trace_parent,
			s.id, s.workspace_id, s.endpoint, s.protocol, s.signing_key, s.status, s.created_at,
			s.last_delivery_at, s.last_delivery_outcome, s.delivery_format, s.previous_signing_key, s.previous_key_expires_at, s.disabled_reason, s.failing_since
		FROM d
			JOIN webhook_events e ON e.id = d.event_id
			JOIN subscriptions s ON s.id = d.subscription_id
		`+order, args...)
	return collect(rows, err, func(row pgx.Row) (store.Delivery, error) {
		var (
			d                          store.Delivery
			status, subStatus          string
			owner, key, outcome        pgtype.Text
			leaseUntil, finished, last pgtype.Timestamptz
			prev                       previousKey
			failing                    pgtype.Timestamptz
		)
		err := row.Scan(&d.ID, &status, &d.Attempts, &d.CreatedAt, &d.NextAttemptAt, &owner, &leaseUntil, &finished,
			&d.Event.ID, &d.Event.WorkspaceID, &d.Event.Type, &d.Event.Data, &d.Event.CreatedAt, &d.Event.TraceParent,
			&d.Subscription.ID, &d.Subscription.WorkspaceID, &d.Subscription.Endpoint, &d.Subscription.Protocol,
			&key, &subStatus, &d.Subscription.CreatedAt, &last, &outcome, &d.Subscription.DeliveryFormat,
			&prev.key, &prev.until, &d.Subscription.DisabledReason, &failing)
		if err != nil {
			return store.Delivery{}, err
		}
		d.Status = store.DeliveryStatus(status)
		d.CreatedAt = d.CreatedAt.UTC()
		d.NextAttemptAt = d.NextAttemptAt.UTC()
		d.LeaseOwner = owner.String
		d.LeaseExpiresAt = fromTS(leaseUntil)
		d.FinishedAt = fromTS(finished)
		d.Event.CreatedAt = d.Event.CreatedAt.UTC()
		d.Subscription.SigningKey = key.String
		d.Subscription.Status = store.SubscriptionStatus(subStatus)
		d.Subscription.CreatedAt = d.Subscription.CreatedAt.UTC()
		d.Subscription.LastDeliveryAt = fromTS(last)
		d.Subscription.LastDeliveryOutcome = outcome.String
		prev.set(&d.Subscription)
		d.Subscription.FailingSince = fromTS(failing)
		return d, nil
	})
}
