package delivery

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/pyjson"
)

// HeaderEkaSignature is the original service's signature header, of the
// eka delivery format.
const HeaderEkaSignature = "Eka-Webhook-Signature"

// newEkaMessage builds the request of an attempt at d made at now in the
// original service's form, for receivers written for it: the body
// EkaBody, signed in Eka-Webhook-Signature (EkaSignature) under the
// subscription's signing key as it was registered, its UTF-8 bytes.
func newEkaMessage(d store.Delivery, now time.Time) (Message, error) {
	body, err := EkaBody(d.Event)
	if err != nil {
		return Message{}, err
	}
	m := Message{ID: MessageID(d.ID), Timestamp: now, Body: body, Format: store.FormatEka}
	if key := d.Subscription.SigningKey; key != "" {
		m.Signature = EkaSignature([]byte(key), now, body)
	}
	return m, nil
}

// EkaBody is an event as the original service delivered it: an object of
// event (its name), event_time (when it was published, Unix seconds) and
// the members of its data, in their order (a member of the data named
// event or event_time is left out). It is written as Python writes JSON
// (package pyjson): the original service's published receiver parses the
// body and writes it again with json.dumps(payload, separators=(',', ':'))
// before it checks the signature, so the body must come out of that
// unchanged.
func EkaBody(e store.Event) ([]byte, error) {
	b := append([]byte(`{"event":`), pyjson.AppendString(nil, e.Type)...)
	b = strconv.AppendInt(append(b, `,"event_time":`...), e.CreatedAt.Unix(), 10)
	b, err := pyjson.AppendMembers(b, e.Data, "event", "event_time")
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// EkaSignature returns the Eka-Webhook-Signature of body sent at:
// t=<Unix seconds>,v1=<lower-case hex HMAC-SHA-256 of "<t>.<body>">.
func EkaSignature(key []byte, at time.Time, body []byte) string {
	t := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(t + "."))
	mac.Write(body)
	return "t=" + t + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// ekaHeaders are the headers of an eka message: the signature, when the
// subscription has a signing key.
func ekaHeaders(m Message) map[string]string {
	if m.Signature == "" {
		return map[string]string{}
	}
	return map[string]string{HeaderEkaSignature: m.Signature}
}
