package interop

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestWebhookStandardWebhooksInterop: deliveries of a real backend, for
// events published with `hdc events publish`, verify with npm's
// standardwebhooks library and with Svix's own client (and with the Go
// library, in the receiver), for raw keys and for a whsec_ secret passed to
// each library as the same string; altered messages do not.
func TestWebhookStandardWebhooksInterop(t *testing.T) {
	t.Parallel()
	const (
		asciiKey = "interop-signing-key-0123456789"
		utf8Key  = "clé-secrète-ü-0123456789" // signed as its UTF-8 bytes
	)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(testkit.RandomBytes(32)) // signed as the bytes it encodes
	dir := t.TempDir()
	client := hdctest.CreateWebhookClient(t, dir, "interop")
	all := hdctest.NewWebhookReceiver(t, asciiKey, 0)
	receipts := hdctest.NewWebhookReceiver(t, utf8Key, 0)
	users := hdctest.NewWebhookReceiver(t, secret, 0)
	b := hdctest.StartWebhookBackend(t, dir, hdctest.WebhookEnv...)
	b.Subscribe(client, `{"endpoint":"`+all.Srv.URL+`/all","signing_key":"`+asciiKey+`"}`)
	b.Subscribe(client, `{"endpoint":"`+receipts.Srv.URL+`/receipts","protocol":"http","event_names":["receipt.created"],"signing_key":"`+utf8Key+`"}`)
	b.Subscribe(client, `{"endpoint":"`+users.Srv.URL+`/users","protocol":"http","event_names":["user.delete"],"signing_key":"`+secret+`"}`)

	published := map[string]string{
		"appointment.created": `{"appointment_id":"a-1","at":"2026-03-14T10:00:00Z"}`,
		"receipt.created":     `{"receipt_id":"r-1","total":{"amount":12.5,"currency":"INR"},"note":"reçu ✓"}`,
		"user.delete":         `{"user_id":"u-1"}`,
	}
	hdc := hdctest.Binary(t, "hdc")
	for typ, data := range published {
		out, err := hdctest.RunProgram(t, nil, hdc, "events", "publish", "--backend-internal", b.Internal,
			"--workspace", "interop", "--type", typ, "--data", data)
		if err != nil {
			t.Fatal(err)
		}
		var pub struct {
			ID         string
			Deliveries int
		}
		if err := json.Unmarshal(out, &pub); err != nil || pub.ID == "" || pub.Deliveries != map[bool]int{true: 2, false: 1}[typ != "appointment.created"] {
			t.Fatalf("hdc events publish %s printed %s", typ, out)
		}
	}
	testkit.Eventually(t, 30*time.Second, "the deliveries", func() bool {
		return len(all.Deliveries()) >= 3 && len(receipts.Deliveries()) >= 1 && len(users.Deliveries()) >= 1 && b.QueueDepth() == 0
	})

	type check struct {
		Key     string            `json:"key"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	var checks []check
	for _, rc := range []struct {
		r   *hdctest.WebhookReceiver
		key string
	}{{all, asciiKey}, {receipts, utf8Key}, {users, secret}} {
		for _, d := range rc.r.Deliveries() {
			if d.VerifyErr != nil {
				t.Fatalf("the Go library rejects a delivery: %v", d.VerifyErr)
			}
			headers := map[string]string{}
			for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
				headers[name] = d.Header.Get(name)
			}
			checks = append(checks, check{Key: rc.key, Headers: headers, Body: string(d.Body)})
		}
	}
	genuine := len(checks)
	if genuine != 5 {
		t.Fatalf("%d deliveries, want 5 (3 events to one subscriber, 1 to each other)", genuine)
	}
	// Controls: an altered body, the other subscriber's key, another
	// message's id.
	first := checks[0]
	tampered := first
	tampered.Body = strings.Replace(first.Body, `"type":"`, `"type":"x`, 1)
	wrongKey := first
	wrongKey.Key = utf8Key
	otherID := first
	otherID.Headers = map[string]string{"webhook-id": checks[1].Headers["webhook-id"],
		"webhook-timestamp": first.Headers["webhook-timestamp"], "webhook-signature": first.Headers["webhook-signature"]}
	// The secret's text taken as a raw key must not verify: the signature
	// is over the bytes it encodes.
	secretAsRaw := checks[genuine-1]
	secretAsRaw.Key = strings.TrimPrefix(secret, "whsec_")
	checks = append(checks, tampered, wrongKey, otherID, secretAsRaw)

	input, _ := json.Marshal(checks)
	for _, lib := range []string{"standardwebhooks", "svix"} {
		t.Run(lib, func(t *testing.T) { checkWebhookVerifications(t, lib, input, genuine, published) })
	}
}

// checkWebhookVerifications verifies checks (as JSON) with npm library lib:
// the first genuine must verify and carry what was published, the rest must
// be refused.
func checkWebhookVerifications(t *testing.T, lib string, checks []byte, genuine int, published map[string]string) {
	out, err := hdctest.Node(t, checks, "webhook.mjs", "verify", lib)
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		OK      bool            `json:"ok"`
		Payload json.RawMessage `json:"payload"`
		Error   string          `json:"error"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) <= genuine {
		t.Fatalf("node printed %s: %v", out, err)
	}
	for i, r := range results[:genuine] {
		if !r.OK {
			t.Fatalf("npm %s rejects delivery %d: %s", lib, i, r.Error)
		}
		var p struct {
			Type      string          `json:"type"`
			Timestamp time.Time       `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(r.Payload, &p); err != nil || published[p.Type] == "" || time.Since(p.Timestamp) > time.Minute {
			t.Fatalf("payload %s: %v", r.Payload, err)
		}
		var got, want any
		_ = json.Unmarshal(p.Data, &got)
		_ = json.Unmarshal([]byte(published[p.Type]), &want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s data %s, want %s", p.Type, p.Data, published[p.Type])
		}
	}
	for i, r := range results[genuine:] {
		if r.OK {
			t.Fatalf("npm %s accepts altered message %d", lib, i)
		}
	}
}
