package store

import (
	"context"
	"encoding/json"
	"time"
)

// DisabledData is the data of an EventSubscriptionDisabled event.
type DisabledData struct {
	SubscriptionID string `json:"subscription_id"`
	// Reason is DisabledGone or DisabledFailing.
	Reason string `json:"reason"`
	// FailingSince is the start of the first failed attempt since the
	// last success, nil when unknown.
	FailingSince *time.Time `json:"failing_since,omitempty"`
	DisabledAt   time.Time  `json:"disabled_at"`
}

// disableFailing is the end of Finish: it notes whether the attempt
// started at start failed, and disables the subscription, audits and
// publishes next.Notice when next says so (a 410) or when it has failed
// for next.FailingFor at end.
func disableFailing(ctx context.Context, tx AttemptTx, subID string, start, end time.Time, next Next) error {
	if next.Reported != nil {
		*next.Reported = "" // a transaction run again starts afresh
	}
	since, err := tx.NoteFailing(ctx, subID, start, next.Status != DeliveryDelivered)
	if err != nil {
		return err
	}
	var reason string
	switch {
	case next.DisableSubscription:
		reason = DisabledGone
	case next.Status != DeliveryDelivered && next.FailingFor > 0 && !since.IsZero() && end.Sub(since) >= next.FailingFor:
		reason = DisabledFailing
	default:
		return nil
	}
	disabled, err := tx.DisableSubscription(ctx, subID, reason)
	if err != nil || !disabled {
		return err
	}
	if next.Reported != nil {
		*next.Reported = reason
	}
	e := next.Disabled
	e.Reason = reason
	if _, err := AppendAudit(ctx, tx, e); err != nil {
		return err
	}
	if next.Notice.ID == "" {
		return nil
	}
	data := DisabledData{SubscriptionID: subID, Reason: reason, DisabledAt: end.UTC()}
	if !since.IsZero() {
		s := since.UTC()
		data.FailingSince = &s
	}
	n := next.Notice
	if n.Data, err = json.Marshal(data); err != nil {
		return err
	}
	return tx.Publish(ctx, n)
}
