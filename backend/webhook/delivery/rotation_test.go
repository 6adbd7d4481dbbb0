package delivery

import (
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/health-data-connect/hdc/backend/store"
)

// The keys of a rotation: oldKey replaced by newKey, whose grace ends at
// graceEnd.
const (
	oldKey = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	newKey = "whsec_ZJdQqjBJ2NSp+Zgz5cJ7nHbWKvJuAxDd"
)

var graceEnd = time.Unix(1_800_000_000, 0)

// rotated is a delivery of a subscription in the rotation's format.
func rotated(format string) store.Delivery {
	d := testDelivery(newKey)
	d.Subscription.PreviousSigningKey, d.Subscription.PreviousKeyExpiresAt = oldKey, graceEnd
	d.Subscription.DeliveryFormat = format
	return d
}

// TestRotationSignatures: during the grace webhook-signature carries the
// new key's signature, then the old's, space-separated, and the Standard
// Webhooks library verifies the message with either key; from the grace's
// end on, only the new key's, and the old key no longer verifies.
func TestRotationSignatures(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		at       time.Time
		sigs     int
		oldValid bool
	}{
		{"during the grace", graceEnd.Add(-time.Hour), 2, true},
		{"a second before its end", graceEnd.Add(-time.Second), 2, true},
		{"at its end", graceEnd, 1, false},
		{"after it", graceEnd.Add(time.Hour), 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := NewMessage(rotated(""), tt.at)
			if err != nil {
				t.Fatal(err)
			}
			sigs := strings.Split(m.Signature, " ")
			if len(sigs) != tt.sigs {
				t.Fatalf("webhook-signature %q: %d signatures, want %d", m.Signature, len(sigs), tt.sigs)
			}
			h := http.Header{}
			for k, v := range m.Headers() {
				h.Set(k, v)
			}
			if err := verifyWith(newKey, m.Body, h); err != nil {
				t.Fatalf("the new key does not verify: %v", err)
			}
			if err := verifyWith(oldKey, m.Body, h); (err == nil) != tt.oldValid {
				t.Fatalf("the old key verifies: %v, want %v", err == nil, tt.oldValid)
			}
			// The new key's signature comes first.
			first := http.Header{}
			for k, v := range m.Headers() {
				first.Set(k, v)
			}
			first.Set(HeaderSignature, sigs[0])
			if err := verifyWith(newKey, m.Body, first); err != nil {
				t.Fatalf("the first signature is not the new key's: %v", err)
			}
		})
	}
}

// verifyWith verifies a message with the Standard Webhooks library under
// key, the timestamp aside (the tests sign at fixed times).
func verifyWith(key string, body []byte, h http.Header) error {
	wh, err := standardwebhooks.NewWebhook(key)
	if err != nil {
		return err
	}
	return wh.VerifyIgnoringTimestamp(body, h)
}

// TestRotationEka: the eka format has one signature header, so it signs
// with the new key alone, even during the grace.
func TestRotationEka(t *testing.T) {
	t.Parallel()
	at := graceEnd.Add(-time.Hour)
	m, err := NewMessage(rotated(store.FormatEka), at)
	if err != nil {
		t.Fatal(err)
	}
	if want := EkaSignature([]byte(newKey), at, m.Body); m.Signature != want {
		t.Fatalf("Eka-Webhook-Signature %q, want the new key's %q", m.Signature, want)
	}
	if old := EkaSignature([]byte(oldKey), at, m.Body); strings.Contains(m.Signature, old[strings.Index(old, "v1="):]) {
		t.Fatal("the eka message carries the old key's signature")
	}
}

// TestSigningKeys: which keys sign, by the subscription's keys and time.
func TestSigningKeys(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		sub  store.Subscription
		want string
	}{
		{"no key", store.Subscription{}, ""},
		{"no key, a stale previous one", store.Subscription{PreviousSigningKey: oldKey, PreviousKeyExpiresAt: graceEnd.Add(time.Hour)}, ""},
		{"a key", store.Subscription{SigningKey: newKey}, newKey},
		{"in the grace", store.Subscription{SigningKey: newKey, PreviousSigningKey: oldKey, PreviousKeyExpiresAt: graceEnd.Add(time.Hour)}, newKey + "|" + oldKey},
		{"past the grace", store.Subscription{SigningKey: newKey, PreviousSigningKey: oldKey, PreviousKeyExpiresAt: graceEnd}, newKey},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := strings.Join(SigningKeys(tt.sub, graceEnd), "|"); got != tt.want {
				t.Fatalf("SigningKeys = %q, want %q", got, tt.want)
			}
		})
	}
}
