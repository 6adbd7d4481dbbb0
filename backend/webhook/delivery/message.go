package delivery

import (
	"encoding/json"
	"strconv"
	"strings"
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
	// eka format), empty when the subscription has no signing key; during
	// a key rotation's grace it holds two, the new key's first (SignWith).
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
	m.Signature, err = SignWith(SigningKeys(d.Subscription, now), m.ID, now, body)
	if err != nil {
		return Message{}, err
	}
	return m, nil
}

// SigningKeys are the keys a Standard Webhooks message of sub sent at now
// is signed with: its signing key, then its previous key while that is in
// its grace (store.Subscription.PreviousKeyExpiresAt); none when it has
// no signing key.
func SigningKeys(sub store.Subscription, now time.Time) []string {
	if sub.SigningKey == "" {
		return nil
	}
	keys := []string{sub.SigningKey}
	if sub.PreviousSigningKey != "" && now.Before(sub.PreviousKeyExpiresAt) {
		keys = append(keys, sub.PreviousSigningKey)
	}
	return keys
}

// SignWith returns the webhook-signature of id.timestamp.body under each
// of keys (contract.SigningKeyBytes forms), space-separated in their
// order, as Standard Webhooks lets a rotation carry several: a verifier
// accepts the message when any one matches its key. It is empty when
// keys is.
func SignWith(keys []string, id string, timestamp time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(keys))
	for _, key := range keys {
		raw, err := contract.SigningKeyBytes(key)
		if err != nil {
			return "", err
		}
		sig, err := Sign(raw, id, timestamp, body)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
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
