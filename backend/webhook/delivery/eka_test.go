package delivery

import (
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

func TestEkaMessage(t *testing.T) {
	at := time.Unix(1_795_000_000, 0)
	event := store.Event{ID: "e1", Type: "receipt.created", CreatedAt: time.Unix(1_794_999_990, 500),
		Data: []byte(`{"receipt_id": "r-1", "event": "spoofed", "note": "reçu ✓ <&>", "total": {"amount": 12.5, "n": 3}}`)}
	for _, tt := range []struct {
		name, key string
		headers   map[string]string
	}{
		// The signature: printf 't.body' | openssl dgst -sha256 -hmac key.
		{"signed", "a-signing-key-0123456789", map[string]string{HeaderEkaSignature: "t=1795000000,v1=534b351f9ae2d2a62aa7edc5b040a40b12c4d5c4332f9e25fbc0a95e1c3356e2"}},
		{"unsigned", "", map[string]string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := store.Delivery{ID: "d1", Event: event, Subscription: store.Subscription{SigningKey: tt.key, DeliveryFormat: store.FormatEka}}
			m, err := NewMessage(d, at)
			if err != nil {
				t.Fatal(err)
			}
			const body = `{"event":"receipt.created","event_time":1794999990,"receipt_id":"r-1","note":"re\u00e7u \u2713 <&>","total":{"amount":12.5,"n":3}}`
			if string(m.Body) != body {
				t.Fatalf("body %s, want %s", m.Body, body)
			}
			got := m.Headers()
			if len(got) != len(tt.headers) || got[HeaderEkaSignature] != tt.headers[HeaderEkaSignature] {
				t.Fatalf("headers %v, want %v", got, tt.headers)
			}
		})
	}
}
