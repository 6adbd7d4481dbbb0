package webhook

import (
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// Delivery is a delivery as the log shows it.
type Delivery struct {
	ID string `json:"id"`
	// EventID is the webhook-id sent, the same on every attempt.
	EventID       string     `json:"event_id"`
	EventType     string     `json:"event_type"`
	Status        string     `json:"status"`
	CreatedAt     time.Time  `json:"created_at"`
	DeliveredAt   *time.Time `json:"delivered_at"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	LastOutcome   *string    `json:"last_outcome"`
}

// DeliveryPage is a page of the delivery log; Next is the cursor of the
// following page, null on the last.
type DeliveryPage struct {
	Deliveries []Delivery `json:"deliveries"`
	Next       *string    `json:"next"`
}

// AttemptView is one attempt of a delivery: the endpoint's HTTP status
// (null when it did not answer), the outcome (http_503, timeout,
// dns_error, …) and the start of its answer.
type AttemptView struct {
	Number       int       `json:"number"`
	StartedAt    time.Time `json:"started_at"`
	DurationMS   int64     `json:"duration_ms"`
	StatusCode   *int      `json:"status_code"`
	Outcome      string    `json:"outcome"`
	ResponseBody *string   `json:"response_body"`
}

// DeliveryDetail is a delivery with its attempts, in order.
type DeliveryDetail struct {
	Delivery
	AttemptList []AttemptView `json:"attempt_list"`
}

// DeliveryOf is d as the log shows it.
func DeliveryOf(d store.LoggedDelivery) Delivery {
	return Delivery{
		ID: d.ID, EventID: MessageID(d.ID), EventType: d.EventType, Status: string(d.Status),
		CreatedAt: d.CreatedAt, DeliveredAt: timeOrNil(d.DeliveredAt), Attempts: d.Attempts,
		NextAttemptAt: timeOrNil(d.NextAttemptAt), LastOutcome: stringOrNil(d.LastOutcome),
	}
}

// DeliveryDetailOf is d with its attempts as.
func DeliveryDetailOf(d store.LoggedDelivery, as []store.Attempt) DeliveryDetail {
	out := DeliveryDetail{Delivery: DeliveryOf(d), AttemptList: make([]AttemptView, 0, len(as))}
	for _, a := range as {
		v := AttemptView{Number: a.Number, StartedAt: a.StartedAt, DurationMS: a.Duration.Milliseconds(),
			Outcome: a.Outcome, ResponseBody: stringOrNil(a.ResponseBody)}
		if a.StatusCode != 0 {
			v.StatusCode = &a.StatusCode
		}
		out.AttemptList = append(out.AttemptList, v)
	}
	return out
}

// deliveryPage is the page of the first limit of ds, which has a next
// cursor when ds has more.
func deliveryPage(ds []store.LoggedDelivery, limit int) DeliveryPage {
	more := len(ds) > limit
	ds = ds[:min(len(ds), limit)]
	p := DeliveryPage{Deliveries: make([]Delivery, 0, len(ds))}
	for _, d := range ds {
		p.Deliveries = append(p.Deliveries, DeliveryOf(d))
	}
	if more && limit > 0 {
		last := ds[len(ds)-1]
		next := DeliveryCursor(store.Cursor{CreatedAt: last.CreatedAt, ID: last.ID})
		p.Next = &next
	}
	return p
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func stringOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
