package delivery

import (
	"encoding/json"
	"strconv"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
)

// The Standard Webhooks headers.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// Payload is the body of every delivery, as Standard Webhooks suggests.
type Payload struct {
	Type string `json:"type"`
	// Timestamp is when the event was published (RFC 3339, UTC); unlike the
	// webhook-timestamp header it is the same on every attempt.
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Message is one attempt's request: a body and the headers that sign it.
type Message struct {
	// ID is the webhook-id, the same on every attempt of a delivery, so a
	// subscriber deduplicates with it.
	ID string
	// Timestamp is the webhook-timestamp, the time of this attempt.
	Timestamp time.Time
	Body      []byte
	// Signature is the webhook-signature (Eka-Webhook-Signature in the
	// eka format), empty when the subscription has no signing key.
	Signature string
	// Format is the subscription's delivery format, which decides the
	// body's form and the headers.
	Format string
}

// MessageID is the webhook-id of a delivery.
func MessageID(deliveryID string) string { return webhook.MessageID(deliveryID) }

// NewMessage builds and signs the request of an attempt at d made at now,
// in the subscription's delivery format. The body depends on the event
// only, so retries send the same bytes.
func NewMessage(d store.Delivery, now time.Time) (Message, error) {
	if d.Subscription.Format() == store.FormatEka {
		return newEkaMessage(d, now)
	}
	body, err := json.Marshal(Payload{Type: d.Event.Type, Timestamp: d.Event.CreatedAt.UTC(), Data: d.Event.Data})
	if err != nil {
		return Message{}, err
	}
	m := Message{ID: MessageID(d.ID), Timestamp: now, Body: body, Format: store.FormatStandardWebhooks}
	if key := d.Subscription.SigningKey; key != "" {
		raw, err := contract.SigningKeyBytes(key)
		if err != nil {
			return Message{}, err
		}
		if m.Signature, err = Sign(raw, m.ID, now, body); err != nil {
			return Message{}, err
		}
	}
	return m, nil
}

// Sign returns the Standard Webhooks signature "v1,<base64 HMAC-SHA256>"
// of id.timestamp.body under key, the raw bytes contract.SigningKeyBytes returns.
func Sign(key []byte, id string, timestamp time.Time, body []byte) (string, error) {
	wh, err := standardwebhooks.NewWebhookRaw(key)
	if err != nil {
		return "", err
	}
	return wh.Sign(id, timestamp, body)
}

// Headers returns the webhook headers: id, timestamp (Unix seconds) and
// the signature when there is one; in the eka format, the signature alone.
func (m Message) Headers() map[string]string {
	if m.Format == store.FormatEka {
		return ekaHeaders(m)
	}
	h := map[string]string{
		HeaderID:        m.ID,
		HeaderTimestamp: strconv.FormatInt(m.Timestamp.Unix(), 10),
	}
	if m.Signature != "" {
		h[HeaderSignature] = m.Signature
	}
	return h
}
