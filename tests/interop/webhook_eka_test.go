package interop

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestWebhookEkaFormat: a subscription made with "delivery_format": "eka"
// gets its deliveries in the original service's form, which the receivers
// written for it verify with their own code (tests/interop/eka_receiver.py:
// the documentation's sample, which MACs the body as received and rejects
// a t more than 180 s away, and ekapython-webhook-sdk's verify_signature,
// which MACs the body as Python writes it again), for an ASCII and a UTF-8
// signing key and a body with non-ASCII text, quotes and <&>; an altered
// body, another key or a stale t are refused. The subscription lists its
// format; a Standard Webhooks subscription beside it is unchanged.
func TestWebhookEkaFormat(t *testing.T) {
	t.Parallel()
	const (
		asciiKey = "eka-signing-key-0123456789"
		utf8Key  = "clé-secrète-ü-0123456789"
	)
	dir := t.TempDir()
	client := hdctest.CreateWebhookClient(t, dir, "eka")
	ascii, utf8 := hdctest.NewWebhookReceiver(t, asciiKey, 0), hdctest.NewWebhookReceiver(t, utf8Key, 0)
	standard := hdctest.NewWebhookReceiver(t, asciiKey, 0)
	b := hdctest.StartWebhookBackend(t, dir, hdctest.WebhookEnv...)
	b.Subscribe(client, `{"endpoint":"`+ascii.Srv.URL+`/a","signing_key":"`+asciiKey+`","delivery_format":"eka"}`)
	b.Subscribe(client, `{"endpoint":"`+utf8.Srv.URL+`/u","event_names":["receipt.created"],"signing_key":"`+utf8Key+`","delivery_format":"eka"}`)
	b.Subscribe(client, `{"endpoint":"`+standard.Srv.URL+`/s","signing_key":"`+asciiKey+`"}`)

	published := map[string]string{
		"appointment.created": `{"appointment_id":"a-1","status":"BK","client_meta":{"visit_id":"v \"1\""}}`,
		"receipt.created":     `{"receipt_id":"r-1","total":{"amount":12.5,"currency":"INR"},"note":"reçu ✓ <&> 😀\n"}`,
	}
	hdc := hdctest.Binary(t, "hdc")
	for typ, data := range published {
		if _, err := hdctest.RunProgram(t, nil, hdc, "events", "publish", "--backend-internal", b.Internal,
			"--workspace", "eka", "--type", typ, "--data", data); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 30*time.Second, "the deliveries", func() bool {
		return len(ascii.Deliveries()) >= 2 && len(utf8.Deliveries()) >= 1 && len(standard.Deliveries()) >= 2 && b.QueueDepth() == 0
	})
	for _, d := range standard.Deliveries() {
		if d.VerifyErr != nil || d.Header.Get(ekaSignature) != "" {
			t.Fatalf("a Standard Webhooks delivery: %v, %v", d.VerifyErr, d.Header)
		}
	}

	type check struct {
		Key       string `json:"key"`
		Signature string `json:"signature"`
		Body      string `json:"body"`
		NowOffset int    `json:"now_offset"`
	}
	var checks []check
	for _, rc := range []struct {
		r   *hdctest.WebhookReceiver
		key string
	}{{ascii, asciiKey}, {utf8, utf8Key}} {
		for _, d := range rc.r.Deliveries() {
			if d.Header.Get("webhook-id") != "" || d.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("an eka delivery's headers: %v", d.Header)
			}
			checks = append(checks, check{Key: rc.key, Signature: d.Header.Get(ekaSignature), Body: string(d.Body)})
		}
	}
	genuine := len(checks)
	tampered, otherKey, stale := checks[0], checks[0], checks[0]
	tampered.Body = strings.Replace(tampered.Body, `"event":"`, `"event":"x`, 1)
	otherKey.Key = utf8Key
	stale.NowOffset = 181
	checks = append(checks, tampered, otherKey, stale)
	input, _ := json.Marshal(checks)
	out, err := hdctest.RunProgram(t, input, "/usr/bin/python3", filepath.Join(hdctest.RepoRoot, "tests", "interop", "eka_receiver.py"))
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []struct {
		Docs, SDK bool
		Event     string
	}
	if err := json.Unmarshal(out, &verdicts); err != nil || len(verdicts) != len(checks) {
		t.Fatalf("eka_receiver.py printed %s (%v)", out, err)
	}
	for i, v := range verdicts {
		wantDocs, wantSDK := i < genuine, i < genuine
		switch i - genuine {
		case 2: // stale: the SDK does not check t
			wantSDK = true
		}
		if v.Docs != wantDocs || v.SDK != wantSDK {
			t.Errorf("check %d (%s): the documentation's receiver %v, the SDK %v; want %v, %v", i, checks[i].Body, v.Docs, v.SDK, wantDocs, wantSDK)
		}
		if i < genuine && published[v.Event] == "" {
			t.Errorf("check %d: event %q", i, v.Event)
		}
	}
	list := b.List(client)
	formats := map[string]string{}
	for _, s := range list {
		formats[s.Endpoint] = s.DeliveryFormat
	}
	if formats[ascii.Srv.URL+"/a"] != "eka" || formats[standard.Srv.URL+"/s"] != "standard-webhooks" {
		t.Fatalf("the subscriptions list their formats as %v", formats)
	}
}

// ekaSignature is the eka format's signature header.
const ekaSignature = "Eka-Webhook-Signature"
