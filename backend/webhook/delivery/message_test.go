package delivery

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/health-data-connect/hdc/backend/store"
)

// TestSignVector signs the Standard Webhooks reference vector of
// testdata/jwe.json: its whsec_ secret is base64, the raw key is what it
// decodes to.
func TestSignVector(t *testing.T) {
	data, err := os.ReadFile("../../../testdata/jwe.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors struct {
		V struct {
			Secret    string `json:"secret"`
			MsgID     string `json:"msg_id"`
			Timestamp int64  `json:"timestamp"`
			Payload   string `json:"payload"`
			Signature string `json:"signature"`
		} `json:"standard_webhooks_signature"`
	}
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	v := vectors.V
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(v.Secret, "whsec_"))
	if err != nil || v.Signature == "" {
		t.Fatalf("vector: %v %+v", err, v)
	}
	got, err := Sign(key, v.MsgID, time.Unix(v.Timestamp, 0), []byte(v.Payload))
	if err != nil {
		t.Fatal(err)
	}
	if got != v.Signature {
		t.Fatalf("signature = %s, want %s", got, v.Signature)
	}
	if other, _ := Sign(key, v.MsgID, time.Unix(v.Timestamp+1, 0), []byte(v.Payload)); other == v.Signature {
		t.Fatal("the signature does not cover the timestamp")
	}
}

// TestNewMessageSecret signs with a whsec_ secret's decoded bytes: the
// same string verifies with the Standard Webhooks library.
func TestNewMessageSecret(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	m, err := NewMessage(testDelivery(secret), time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for k, v := range m.Headers() {
		h.Set(k, v)
	}
	tests := []struct {
		name       string
		key        func() (*standardwebhooks.Webhook, error)
		wantVerify bool
	}{
		{"the secret string", func() (*standardwebhooks.Webhook, error) { return standardwebhooks.NewWebhook(secret) }, true},
		{"the string's bytes", func() (*standardwebhooks.Webhook, error) { return standardwebhooks.NewWebhookRaw([]byte(secret)) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wh, err := tt.key()
			if err != nil {
				t.Fatal(err)
			}
			if err := wh.VerifyIgnoringTimestamp(m.Body, h); (err == nil) != tt.wantVerify {
				t.Fatalf("verify: %v, want success %t", err, tt.wantVerify)
			}
		})
	}
}

func testDelivery(key string) store.Delivery {
	return store.Delivery{
		ID: "0123456789abcdef0123456789abcdef",
		Event: store.Event{ID: "e1", WorkspaceID: "w1", Type: "receipt.created", Data: []byte(`{"receipt_id":"r-1","amount":12.5}`),
			CreatedAt: time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)},
		Subscription: store.Subscription{ID: "s1", WorkspaceID: "w1", Protocol: "https", Endpoint: "https://example.com/h", SigningKey: key},
	}
}

func TestNewMessage(t *testing.T) {
	const key = "clé-secrète-0123456789" // signed as its UTF-8 bytes
	d := testDelivery(key)
	first, err := NewMessage(d, time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	retry, err := NewMessage(d, time.Unix(1_800_000_060, 0))
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != "msg_"+d.ID || retry.ID != first.ID || !bytes.Equal(first.Body, retry.Body) {
		t.Fatalf("attempts differ in id or body: %q %q", first.ID, retry.ID)
	}
	want := `{"type":"receipt.created","timestamp":"2026-03-14T15:09:26.535897Z","data":{"receipt_id":"r-1","amount":12.5}}`
	if string(first.Body) != want {
		t.Fatalf("body = %s\nwant %s", first.Body, want)
	}
	if first.Signature == retry.Signature {
		t.Fatal("two attempts at different times have the same signature")
	}

	wh, err := standardwebhooks.NewWebhookRaw([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for k, v := range first.Headers() {
		h.Set(k, v)
	}
	if h.Get("webhook-timestamp") != "1800000000" || !strings.HasPrefix(h.Get("webhook-signature"), "v1,") {
		t.Fatalf("headers = %v", h)
	}
	if err := wh.VerifyIgnoringTimestamp(first.Body, h); err != nil {
		t.Fatalf("the Standard Webhooks library rejects our signature: %v", err)
	}
	tampered := bytes.Replace(first.Body, []byte("12.5"), []byte("125"), 1)
	if err := wh.VerifyIgnoringTimestamp(tampered, h); err == nil {
		t.Fatal("a tampered body verifies")
	}
	latin1, _ := standardwebhooks.NewWebhookRaw([]byte("cl\xe9-secr\xe8te-0123456789"))
	if err := latin1.VerifyIgnoringTimestamp(first.Body, h); err == nil {
		t.Fatal("the key is not used as its UTF-8 bytes")
	}

	unsigned, err := NewMessage(testDelivery(""), time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if hs := unsigned.Headers(); len(hs) != 2 || hs["webhook-signature"] != "" || hs["webhook-id"] != first.ID {
		t.Fatalf("unsigned headers = %v", hs)
	}
}
