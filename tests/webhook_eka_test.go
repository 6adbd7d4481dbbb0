package tests

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
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
	const (
		asciiKey = "eka-signing-key-0123456789"
		utf8Key  = "clé-secrète-ü-0123456789"
	)
	dir := t.TempDir()
	client := createWebhookClient(t, dir, "eka")
	ascii, utf8 := newWebhookReceiver(t, asciiKey, 0), newWebhookReceiver(t, utf8Key, 0)
	standard := newWebhookReceiver(t, asciiKey, 0)
	b := startWebhookBackend(t, dir, webhookEnv...)
	b.subscribe(client, `{"endpoint":"`+ascii.srv.URL+`/a","signing_key":"`+asciiKey+`","delivery_format":"eka"}`)
	b.subscribe(client, `{"endpoint":"`+utf8.srv.URL+`/u","event_names":["receipt.created"],"signing_key":"`+utf8Key+`","delivery_format":"eka"}`)
	b.subscribe(client, `{"endpoint":"`+standard.srv.URL+`/s","signing_key":"`+asciiKey+`"}`)

	published := map[string]string{
		"appointment.created": `{"appointment_id":"a-1","status":"BK","client_meta":{"visit_id":"v \"1\""}}`,
		"receipt.created":     `{"receipt_id":"r-1","total":{"amount":12.5,"currency":"INR"},"note":"reçu ✓ <&> 😀\n"}`,
	}
	hdc := binary(t, "hdc")
	for typ, data := range published {
		if _, err := runProgram(t, nil, hdc, "events", "publish", "--backend-internal", b.internal,
			"--workspace", "eka", "--type", typ, "--data", data); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 30*time.Second, "the deliveries", func() bool {
		return len(ascii.deliveries()) >= 2 && len(utf8.deliveries()) >= 1 && len(standard.deliveries()) >= 2 && b.queueDepth() == 0
	})
	for _, d := range standard.deliveries() {
		if d.verifyErr != nil || d.header.Get(ekaSignature) != "" {
			t.Fatalf("a Standard Webhooks delivery: %v, %v", d.verifyErr, d.header)
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
		r   *webhookReceiver
		key string
	}{{ascii, asciiKey}, {utf8, utf8Key}} {
		for _, d := range rc.r.deliveries() {
			if d.header.Get("webhook-id") != "" || d.header.Get("Content-Type") != "application/json" {
				t.Fatalf("an eka delivery's headers: %v", d.header)
			}
			checks = append(checks, check{Key: rc.key, Signature: d.header.Get(ekaSignature), Body: string(d.body)})
		}
	}
	genuine := len(checks)
	tampered, otherKey, stale := checks[0], checks[0], checks[0]
	tampered.Body = strings.Replace(tampered.Body, `"event":"`, `"event":"x`, 1)
	otherKey.Key = utf8Key
	stale.NowOffset = 181
	checks = append(checks, tampered, otherKey, stale)
	input, _ := json.Marshal(checks)
	out, err := runProgram(t, input, "/usr/bin/python3", filepath.Join(repoRoot, "tests", "interop", "eka_receiver.py"))
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
	list := b.list(client)
	formats := map[string]string{}
	for _, s := range list {
		formats[s.Endpoint] = s.DeliveryFormat
	}
	if formats[ascii.srv.URL+"/a"] != "eka" || formats[standard.srv.URL+"/s"] != "standard-webhooks" {
		t.Fatalf("the subscriptions list their formats as %v", formats)
	}
}

// ekaSignature is the eka format's signature header.
const ekaSignature = "Eka-Webhook-Signature"

// list returns client's subscriptions, as the edge would forward the
// request.
func (b *webhookBackend) list(client identity.Credentials) []struct{ Endpoint, DeliveryFormat string } {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.public+contract.PathSubscriptions, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	asEdge(req)
	req.Header.Set(contract.HeaderClientID, client.ClientID)
	req.Header.Set(contract.HeaderWorkspaceID, client.WorkspaceID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Subscriptions []struct {
			Endpoint       string `json:"endpoint"`
			DeliveryFormat string `json:"delivery_format"`
		} `json:"subscriptions"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		b.t.Fatalf("list: %d %v", res.StatusCode, err)
	}
	subs := make([]struct{ Endpoint, DeliveryFormat string }, len(out.Subscriptions))
	for i, s := range out.Subscriptions {
		subs[i].Endpoint, subs[i].DeliveryFormat = s.Endpoint, s.DeliveryFormat
	}
	return subs
}
