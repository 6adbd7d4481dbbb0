package store

import (
	"strconv"
	"strings"
	"time"
)

// LogQuery builds the statements of the delivery log for an engine: its
// placeholders (ph(1) is the first) and its way of passing a time (at).
type LogQuery struct {
	Placeholder func(n int) string
	Time        func(time.Time) any
}

// logSelect reads deliveries as the log shows them: the columns ScanLogged
// expects, with the last attempt's outcome.
const logSelect = `
	SELECT d.id, d.subscription_id, e.id, e.type, d.status, d.attempts, d.created_at, d.next_attempt_at, d.finished_at,
		COALESCE(a.outcome, '')
	FROM webhook_deliveries d
		JOIN subscriptions s ON s.id = d.subscription_id
		JOIN webhook_events e ON e.id = d.event_id
		LEFT JOIN webhook_attempts a ON a.delivery_id = d.id AND a.number = d.attempts
	WHERE `

// logStatusSQL is the condition on d of each log status (LogStatus).
var logStatusSQL = map[DeliveryLogStatus]string{
	DeliveryLogDelivered: `d.status = 'delivered'`,
	DeliveryLogGivenUp:   `d.status IN ('failed', 'canceled')`,
	DeliveryLogFailed:    `(d.status = 'pending' AND d.finished_at IS NOT NULL)`,
	DeliveryLogPending:   `(d.status = 'pending' AND d.finished_at IS NULL)`,
}

// RecoverableSQL is the condition on d of the deliveries
// RecoverDeliveries takes again: failed or given up.
var RecoverableSQL = `(` + logStatusSQL[DeliveryLogFailed] + ` OR ` + logStatusSQL[DeliveryLogGivenUp] + `)`

// List is the statement of ListDeliveries and its arguments.
func (q LogQuery) List(f DeliveryFilter) (string, []any) {
	var b logWhere
	b.q = q
	b.add(`d.subscription_id = `, f.SubscriptionID)
	b.add(`s.workspace_id = `, f.WorkspaceID)
	if c, ok := logStatusSQL[f.Status]; ok {
		b.conds = append(b.conds, c)
	}
	if f.EventType != "" {
		b.add(`e.type = `, f.EventType)
	}
	if !f.Since.IsZero() {
		b.add(`d.created_at >= `, q.Time(f.Since))
	}
	if !f.Until.IsZero() {
		b.add(`d.created_at < `, q.Time(f.Until))
	}
	if !f.Before.CreatedAt.IsZero() {
		b.args = append(b.args, q.Time(f.Before.CreatedAt), f.Before.ID)
		b.conds = append(b.conds, `(d.created_at, d.id) < (`+q.Placeholder(len(b.args)-1)+`, `+q.Placeholder(len(b.args))+`)`)
	}
	sql := logSelect + strings.Join(b.conds, ` AND `) + ` ORDER BY d.created_at DESC, d.id DESC`
	if f.Limit > 0 {
		b.args = append(b.args, f.Limit)
		sql += ` LIMIT ` + q.Placeholder(len(b.args))
	}
	return sql, b.args
}

// One is the statement that reads one delivery of a workspace's
// subscription as the log shows it.
func (q LogQuery) One(workspaceID, subscriptionID, deliveryID string) (string, []any) {
	return logSelect + `d.id = ` + q.Placeholder(1) + ` AND d.subscription_id = ` + q.Placeholder(2) +
		` AND s.workspace_id = ` + q.Placeholder(3), []any{deliveryID, subscriptionID, workspaceID}
}

// logWhere gathers the conditions of a statement and their arguments.
type logWhere struct {
	q     LogQuery
	conds []string
	args  []any
}

func (b *logWhere) add(cond string, arg any) {
	b.args = append(b.args, arg)
	b.conds = append(b.conds, cond+b.q.Placeholder(len(b.args)))
}

// PlaceholderDollar numbers placeholders as PostgreSQL does: $1, $2, …
func PlaceholderDollar(n int) string { return "$" + strconv.Itoa(n) }

// PlaceholderQuestion is SQLite's placeholder, ?, whatever n.
func PlaceholderQuestion(int) string { return "?" }

// Logged completes a delivery read by a LogQuery statement: its log status
// and the times that apply to it.
func Logged(d LoggedDelivery, status DeliveryStatus, finished time.Time) LoggedDelivery {
	d.Status = LogStatus(status, finished)
	if status == DeliveryDelivered {
		d.DeliveredAt = finished
	}
	if status != DeliveryPending {
		d.NextAttemptAt = time.Time{}
	}
	return d
}

// RedeliverSQL makes delivery P2 of subscription P3 pending and due at
// P1; a pending one keeps its lease (its attempt under way finishes).
func (q LogQuery) RedeliverSQL() string {
	return `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ` + q.Placeholder(1) + `, finished_at = NULL,
		lease_owner = CASE WHEN status = 'pending' THEN lease_owner END,
		lease_expires_at = CASE WHEN status = 'pending' THEN lease_expires_at END
		WHERE id = ` + q.Placeholder(2) + ` AND subscription_id = ` + q.Placeholder(3)
}

// ActiveSubscription is what Redeliver and RecoverDeliveries make of a
// subscription's status: ErrConflict unless it is active.
func ActiveSubscription(status SubscriptionStatus) error {
	if status != SubscriptionActive {
		return ErrConflict
	}
	return nil
}
