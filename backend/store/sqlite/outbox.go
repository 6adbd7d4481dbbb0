package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// PublishEvent implements store.Store. The fan-out is one INSERT … SELECT
// over the subscriptions selecting the event, so it sees exactly the
// subscriptions that exist when the transaction commits.
func (s *Store) PublishEvent(ctx context.Context, e store.Event) ([]string, error) {
	var ids []string
	err := s.tx(ctx, func(tx *sql.Tx) (err error) {
		ids, err = publish(ctx, tx, e)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// publish stores e and its deliveries in tx.
func publish(ctx context.Context, tx *sql.Tx, e store.Event) ([]string, error) {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO webhook_events (id, workspace_id, type, data, created_at, trace_parent) VALUES (?, ?, ?, ?, ?, ?)`,
		e.ID, e.WorkspaceID, e.Type, string(e.Data), micros(e.CreatedAt), e.TraceParent)
	if err != nil {
		return nil, translate(err)
	}
	rows, err := tx.QueryContext(ctx, `
		INSERT INTO webhook_deliveries (id, event_id, subscription_id, status, attempts, created_at, next_attempt_at)
		SELECT lower(hex(randomblob(16))), ?, s.id, 'pending', 0, ?, ?
		FROM subscriptions s JOIN subscription_events se ON se.subscription_id = s.id
		WHERE s.workspace_id = ? AND s.status = 'active' AND se.event_name = ?
		RETURNING id`,
		e.ID, micros(e.CreatedAt), micros(e.CreatedAt), e.WorkspaceID, e.Type)
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

// ClaimDeliveries implements store.Store with store.ClaimDue.
func (s *Store) ClaimDeliveries(ctx context.Context, c store.Claim) ([]store.Delivery, error) {
	return store.ClaimDue(ctx, claimer{s}, c)
}

// claimer is the SQLite side of store.ClaimDue.
type claimer struct{ s *Store }

// AnyDue implements store.ClaimEngine.
func (cl claimer) AnyDue(ctx context.Context, now time.Time) (bool, error) {
	var due bool
	err := cl.s.db.QueryRowContext(ctx, anyDueSQL, micros(now)).Scan(&due)
	return due, err
}

// ClaimLocked implements store.ClaimEngine. The transaction holds SQLite's
// write lock, which makes the claim exclusive and the count of leases per
// workspace exact.
func (cl claimer) ClaimLocked(ctx context.Context, c store.Claim) ([]store.Delivery, error) {
	var out []store.Delivery
	err := cl.s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, claimSQL, c.Owner, micros(c.LeaseUntil), micros(c.Now), c.PerWorkspace, c.Limit)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		out, err = queryDeliveries(ctx, tx, `WHERE d.lease_owner = ? AND d.status = 'pending' ORDER BY d.next_attempt_at, d.id`, c.Owner)
		return err
	})
	return out, err
}

// anyDueSQL tells whether a delivery is due at ?1 and not under lease.
const anyDueSQL = `
	SELECT EXISTS (SELECT 1 FROM webhook_deliveries
		WHERE status = 'pending' AND next_attempt_at <= ?1 AND (lease_expires_at IS NULL OR lease_expires_at <= ?1)
			AND subscription_id IN (SELECT id FROM subscriptions WHERE status = 'active'))`

// claimSQL leases (?1 until ?2) the deliveries due at ?3 in turns across
// workspaces: turn is a delivery's rank among its workspace's due ones,
// busy the workspace's unexpired leases, ?4 the cap on both together (none
// when not positive) and ?5 the most deliveries taken.
const claimSQL = `
	UPDATE webhook_deliveries SET lease_owner = ?1, lease_expires_at = ?2
	WHERE status = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at <= ?3) AND id IN (
		SELECT due.id FROM (
			SELECT d.id, d.next_attempt_at, e.workspace_id,
				ROW_NUMBER() OVER (PARTITION BY e.workspace_id ORDER BY d.next_attempt_at, d.id) AS turn
			FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
				JOIN subscriptions s ON s.id = d.subscription_id AND s.status = 'active'
			WHERE d.status = 'pending' AND d.next_attempt_at <= ?3
				AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ?3)
		) due LEFT JOIN (
			SELECT e.workspace_id, COUNT(*) AS n
			FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
			WHERE d.status = 'pending' AND d.lease_expires_at > ?3
			GROUP BY e.workspace_id
		) busy ON busy.workspace_id = due.workspace_id
		WHERE ?4 <= 0 OR due.turn + COALESCE(busy.n, 0) <= ?4
		ORDER BY due.turn, due.next_attempt_at, due.id
		LIMIT ?5)`

// FinishAttempt implements store.Store with store.Finish.
func (s *Store) FinishAttempt(ctx context.Context, owner string, a store.Attempt, next store.Next) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return store.Finish(ctx, attemptTx{s.auditTx(tx)}, owner, a, next) })
}

// attemptTx is store.AttemptTx in a SQLite transaction, which holds the
// write lock: nothing claims the delivery meanwhile.
type attemptTx struct{ auditTx }

func (t attemptTx) LockLeased(ctx context.Context, deliveryID, owner string) (store.LeasedDelivery, error) {
	var (
		d   store.LeasedDelivery
		due int64
	)
	err := t.tx.QueryRowContext(ctx, `
		SELECT subscription_id, attempts, next_attempt_at FROM webhook_deliveries
		WHERE id = ? AND status = 'pending' AND lease_owner = ?`, deliveryID, owner).
		Scan(&d.SubscriptionID, &d.Attempts, &due)
	if errors.Is(err, sql.ErrNoRows) {
		return d, store.ErrLeaseLost
	}
	d.NextAttemptAt = time.UnixMicro(due).UTC()
	return d, err
}

func (t attemptTx) InsertAttempt(ctx context.Context, a store.Attempt, n int) error {
	_, err := t.tx.ExecContext(ctx, `
		INSERT INTO webhook_attempts (delivery_id, number, started_at, duration_us, outcome, status_code, response_body)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.DeliveryID, n, micros(a.StartedAt), a.Duration.Microseconds(), a.Outcome, a.StatusCode, a.ResponseBody)
	return err
}

func (t attemptTx) UpdateDelivery(ctx context.Context, u store.DeliveryUpdate) error {
	_, err := t.tx.ExecContext(ctx, `
		UPDATE webhook_deliveries
		SET status = ?, attempts = ?, next_attempt_at = ?, lease_owner = NULL, lease_expires_at = NULL, finished_at = ?
		WHERE id = ?`,
		string(u.Status), u.Attempts, micros(u.NextAttemptAt), nullMicros(u.FinishedAt), u.ID)
	return err
}

func (t attemptTx) NoteLastDelivery(ctx context.Context, subscriptionID string, start time.Time, outcome string) error {
	_, err := t.tx.ExecContext(ctx, `
		UPDATE subscriptions SET last_delivery_at = ?, last_delivery_outcome = ?
		WHERE id = ? AND (last_delivery_at IS NULL OR last_delivery_at <= ?)`,
		micros(start), outcome, subscriptionID, micros(start))
	return err
}

func (t attemptTx) NoteFailing(ctx context.Context, subscriptionID string, start time.Time, failed bool) (time.Time, error) {
	var since sql.NullInt64
	err := t.tx.QueryRowContext(ctx, `
		UPDATE subscriptions SET failing_since = CASE WHEN ?1 THEN COALESCE(failing_since, ?2) END
		WHERE id = ?3 RETURNING failing_since`, failed, micros(start), subscriptionID).Scan(&since)
	return fromMicros(since), err
}

func (t attemptTx) DisableSubscription(ctx context.Context, subscriptionID, reason string) (bool, error) {
	res, err := t.tx.ExecContext(ctx,
		`UPDATE subscriptions SET status = 'disabled', disabled_reason = ? WHERE id = ? AND status = 'active'`, reason, subscriptionID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (t attemptTx) Publish(ctx context.Context, e store.Event) error {
	_, err := publish(ctx, t.tx, e)
	return err
}

// ReleaseDelivery implements store.Store.
func (s *Store) ReleaseDelivery(ctx context.Context, owner, deliveryID string) error {
	res, err := s.db.ExecContext(ctx, `
		UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL
		WHERE id = ? AND status = 'pending' AND lease_owner = ?`, deliveryID, owner)
	if err != nil {
		return err
	}
	if err := oneRow(res); err != nil {
		return store.ErrLeaseLost
	}
	return nil
}

// GetDelivery implements storetest.Inspector.
func (s *Store) GetDelivery(ctx context.Context, id string) (store.Delivery, error) {
	ds, err := queryDeliveries(ctx, s.db, `WHERE d.id = ?`, id)
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
	rows, err := s.db.QueryContext(ctx, `
		SELECT number, started_at, duration_us, outcome, status_code, response_body FROM webhook_attempts
		WHERE delivery_id = ? ORDER BY number`, deliveryID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Attempt
	for rows.Next() {
		a := store.Attempt{DeliveryID: deliveryID}
		var started, duration int64
		if err := rows.Scan(&a.Number, &started, &duration, &a.Outcome, &a.StatusCode, &a.ResponseBody); err != nil {
			return nil, err
		}
		a.StartedAt = time.UnixMicro(started).UTC()
		a.Duration = time.Duration(duration) * time.Microsecond
		out = append(out, a)
	}
	return out, rows.Err()
}

// OutboxStats implements store.Store.
func (s *Store) OutboxStats(ctx context.Context) (store.OutboxStats, error) {
	var (
		st     store.OutboxStats
		oldest sql.NullInt64
	)
	err := s.db.QueryRowContext(ctx,
		`SELECT COUNT(*), MIN(created_at) FROM webhook_deliveries
			WHERE status = 'pending' AND subscription_id IN (SELECT id FROM subscriptions WHERE status = 'active')`).Scan(&st.Pending, &oldest)
	st.OldestPending = fromMicros(oldest)
	return st, err
}

// PruneOutbox implements store.Store.
func (s *Store) PruneOutbox(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
			DELETE FROM webhook_deliveries WHERE status <> 'pending' AND finished_at < ?1
				OR status = 'pending' AND created_at < ?1
					AND subscription_id IN (SELECT id FROM subscriptions WHERE status = 'disabled')`, micros(before))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
			DELETE FROM webhook_events
			WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`,
			micros(before))
		return err
	})
	return n, err
}

// PruneAttempts implements store.Store.
func (s *Store) PruneAttempts(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM webhook_attempts WHERE started_at < ?`, micros(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryDeliveries reads the deliveries matching where (which may order
// them), with their events and subscriptions.
func queryDeliveries(ctx context.Context, q querier, where string, args ...any) ([]store.Delivery, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT d.id, d.status, d.attempts, d.created_at, d.next_attempt_at, d.lease_owner, d.lease_expires_at, d.finished_at,
			e.id, e.workspace_id, e.type, e.data, e.created_at, e.trace_parent,
			s.id, s.workspace_id, s.endpoint, s.protocol, s.signing_key, s.status, s.created_at,
			s.last_delivery_at, s.last_delivery_outcome, s.delivery_format, s.previous_signing_key, s.previous_key_expires_at, s.disabled_reason, s.failing_since
		FROM webhook_deliveries d
			JOIN webhook_events e ON e.id = d.event_id
			JOIN subscriptions s ON s.id = d.subscription_id
		`+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Delivery
	for rows.Next() {
		var (
			d                            store.Delivery
			status, subStatus, data      string
			created, due, evCreated, sub int64
			owner, key, outcome          sql.NullString
			leaseUntil, finished, last   sql.NullInt64
			prev                         previousKey
			failing                      sql.NullInt64
		)
		err := rows.Scan(&d.ID, &status, &d.Attempts, &created, &due, &owner, &leaseUntil, &finished,
			&d.Event.ID, &d.Event.WorkspaceID, &d.Event.Type, &data, &evCreated, &d.Event.TraceParent,
			&d.Subscription.ID, &d.Subscription.WorkspaceID, &d.Subscription.Endpoint, &d.Subscription.Protocol,
			&key, &subStatus, &sub, &last, &outcome, &d.Subscription.DeliveryFormat, &prev.key, &prev.until, &d.Subscription.DisabledReason, &failing)
		if err != nil {
			return nil, err
		}
		d.Status = store.DeliveryStatus(status)
		d.CreatedAt = time.UnixMicro(created).UTC()
		d.NextAttemptAt = time.UnixMicro(due).UTC()
		d.LeaseOwner = owner.String
		d.LeaseExpiresAt = fromMicros(leaseUntil)
		d.FinishedAt = fromMicros(finished)
		d.Event.Data = []byte(data)
		d.Event.CreatedAt = time.UnixMicro(evCreated).UTC()
		d.Subscription.SigningKey = key.String
		d.Subscription.Status = store.SubscriptionStatus(subStatus)
		d.Subscription.CreatedAt = time.UnixMicro(sub).UTC()
		d.Subscription.LastDeliveryAt = fromMicros(last)
		d.Subscription.LastDeliveryOutcome = outcome.String
		prev.set(&d.Subscription)
		d.Subscription.FailingSince = fromMicros(failing)
		out = append(out, d)
	}
	return out, rows.Err()
}

// scanStrings reads and closes a one-column result.
func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
