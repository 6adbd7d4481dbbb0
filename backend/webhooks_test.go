package backend

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
)

func TestSubscriptions(t *testing.T) {
	h := start(t, func(c *Config) {
		c.SQSEndpoint = "http://127.0.0.1:4100"
		c.WebhookAllowNets = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		c.WebhookAWSAccounts = []string{"100010001000", "123456789012"}
	})
	as := h.as(h.login(h.client("acme"), ""))
	register := func(body string) response { return h.postJSON(contract.PathSubscriptions, body, as...) }

	const key = "whsec-0123456789abcdef"
	res := register(`{"endpoint":"https://hooks.example.com/hdc","event_names":["receipt.created","appointment.created"],"signing_key":"` + key + `"}`)
	if res.StatusCode != 200 {
		t.Fatalf("register: %d %s", res.StatusCode, res.body)
	}
	var reg webhook.Registered
	res.json(t, &reg)
	if _, err := uuid.Parse(reg.ID); err != nil || reg.Status != "success" || reg.SigningKey != "" {
		t.Fatalf("register answer %s", res.body)
	}
	// Without a signing_key, each is given one, in its answer alone.
	for _, body := range []string{
		`{"endpoint":"http://127.0.0.1:4100/100010001000/events","protocol":"SQS endpoint"}`,
		`{"endpoint":"arn:aws:lambda:ap-south-1:123456789012:function:hdc-events","protocol":"Lambda function"}`,
		`{"endpoint":"http://127.0.0.1:9999/plain"}`,
	} {
		res := register(body)
		var generated webhook.Registered
		res.json(t, &generated)
		if raw, err := contract.SigningKeyBytes(generated.SigningKey); res.StatusCode != 200 || err != nil ||
			!strings.HasPrefix(generated.SigningKey, contract.WebhookSecretPrefix) || len(raw) != 32 {
			t.Fatalf("register %s: %d %s", body, res.StatusCode, res.body)
		}
	}

	wantProblem(t, register(`{"endpoint":"https://hooks.example.com/hdc"}`), 409, "conflict")
	// SQS and Lambda reach only the operator's AWS accounts (second
	// review, finding 4).
	wantProblem(t, register(`{"endpoint":"arn:aws:lambda:ap-south-1:210987654321:function:platform-admin"}`), 400, "endpoint_not_allowed")
	wantProblem(t, register(`{"endpoint":"https://sqs.ap-south-1.amazonaws.com/210987654321/other"}`), 400, "endpoint_not_allowed")
	// The allow-list lets loopback through, not the rest.
	wantProblem(t, register(`{"endpoint":"http://169.254.169.254/latest/meta-data/"}`), 400, "endpoint_not_allowed")
	wantProblem(t, register(`{"endpoint":"http://[::1]:9999/plain"}`), 400, "endpoint_not_allowed")
	wantProblem(t, register(`{"endpoint":"https://HOOKS.example.com/hdc"}`), 409, "conflict")
	for _, tt := range []struct{ body, code string }{
		{`{}`, "invalid_request"},
		{`{"endpoint":"hooks.example.com/hdc"}`, "invalid_request"},
		{`{"endpoint":"https://a.example/h","event_names":["user.created"]}`, "invalid_request"},
		{`{"endpoint":"https://a.example/h","signing_key":"short"}`, "invalid_request"},
		{`{"endpoint":"https://a.example/h","protocol":"sqs"}`, "invalid_request"},
		{`{"endpoint":"https://a.example/h","protocol":"carrier pigeon"}`, "invalid_request"},
		{`{"endpoint":"https://a.example/h","url":"x"}`, "invalid_request"},
		{`{"endpoint":42}`, "invalid_json"},
		{`{"endpoint":"https://a.example/h"`, "invalid_json"},
	} {
		p := wantProblem(t, register(tt.body), 400, tt.code)
		if strings.Contains(p.Detail, "short") {
			t.Errorf("detail %q quotes the request", p.Detail)
		}
	}
	wantProblem(t, h.do("POST", h.public+contract.PathSubscriptions, strings.NewReader(`{}`), append([]string{"Content-Type", "text/plain"}, as...)...), 415, "unsupported_media_type")
	wantProblem(t, h.postJSON(contract.PathSubscriptions, `{"endpoint":"https://a.example/h"}`), 401, "unauthenticated")

	list := h.do("GET", h.public+contract.PathSubscriptions, nil, as...)
	if list.StatusCode != 200 || bytes.Contains(list.body, []byte(key)) || bytes.Contains(list.body, []byte(`"signing_key"`)) {
		t.Fatalf("list: %d %s", list.StatusCode, list.body)
	}
	var got webhook.List
	list.json(t, &got)
	if len(got.Subscriptions) != 4 {
		t.Fatalf("%d subscriptions listed", len(got.Subscriptions))
	}
	first := got.Subscriptions[0]
	if first.ID != reg.ID || first.Endpoint != "https://hooks.example.com/hdc" || first.Protocol != "https" ||
		!slices.Equal(first.EventNames, []string{"appointment.created", "receipt.created"}) || first.Status != "active" ||
		!first.HasSigningKey || first.LastDeliveryAt != nil || first.LastDeliveryOutcome != nil ||
		time.Since(first.CreatedAt) > time.Minute {
		t.Fatalf("first subscription = %+v", first)
	}
	if s := got.Subscriptions[1]; s.Protocol != "sqs" || !s.HasSigningKey || !slices.Equal(s.EventNames, webhook.Events) {
		t.Fatalf("second subscription = %+v", s)
	}
	if s := got.Subscriptions[2]; s.Protocol != "lambda" {
		t.Fatalf("third subscription = %+v", s)
	}
	if !bytes.Contains(list.body, []byte(`"last_delivery_at":null`)) {
		t.Fatalf("the list does not show the (empty) last delivery: %s", list.body)
	}

	del := h.do("DELETE", h.public+contract.PathSubscriptions+"/"+reg.ID, nil, as...)
	if del.StatusCode != 204 || len(del.body) != 0 {
		t.Fatalf("delete: %d %s", del.StatusCode, del.body)
	}
	wantProblem(t, h.do("DELETE", h.public+contract.PathSubscriptions+"/"+reg.ID, nil, as...), 404, "not_found")
	wantProblem(t, h.do("DELETE", h.public+contract.PathSubscriptions+"/"+reg.ID, nil), 401, "unauthenticated")
	h.do("GET", h.public+contract.PathSubscriptions, nil, as...).json(t, &got)
	if len(got.Subscriptions) != 3 {
		t.Fatalf("%d subscriptions after delete", len(got.Subscriptions))
	}
	// The endpoint can be registered again once deleted.
	if res := register(`{"endpoint":"https://hooks.example.com/hdc"}`); res.StatusCode != 200 {
		t.Fatalf("re-register: %d %s", res.StatusCode, res.body)
	}
}

// TestOwnListenersRefused (fifth review, finding 1): with loopback
// allowed, the backend's own listeners are still refused at registration,
// as the gateway's.
func TestOwnListenersRefused(t *testing.T) {
	h := start(t, func(c *Config) { c.WebhookAllowNets = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
	as := h.as(h.login(h.client("acme"), ""))
	for _, base := range []string{h.internal, h.public} {
		p := wantProblem(t, h.postJSON(contract.PathSubscriptions, `{"endpoint":"`+base+`/hook"}`, as...), 400, "endpoint_not_allowed")
		if !strings.Contains(p.Detail, "the gateway's own listeners") {
			t.Errorf("%s: detail %q", base, p.Detail)
		}
	}
	if res := h.postJSON(contract.PathSubscriptions, `{"endpoint":"http://127.0.0.1:1/hook"}`, as...); res.StatusCode != 200 {
		t.Fatalf("another loopback port: %d %s", res.StatusCode, res.body)
	}
}

// TestSubscriptionEndpointScreening: without an allow-list, endpoints at
// the backend's own listeners, cloud metadata, private addresses and
// localhost are refused at registration.
func TestSubscriptionEndpointScreening(t *testing.T) {
	h := start(t, nil)
	as := h.as(h.login(h.client("acme"), ""))
	internal := strings.TrimPrefix(h.internal, "http://")
	for _, ep := range []string{
		"http://" + internal + contract.PathEvents,
		"http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.8/hook",
		"https://192.168.0.1/hook",
		"http://localhost:9081/hook",
		"http://[::1]/hook",
	} {
		p := wantProblem(t, h.postJSON(contract.PathSubscriptions, `{"endpoint":"`+ep+`"}`, as...), 400, "endpoint_not_allowed")
		if strings.Contains(p.Detail, ep) {
			t.Errorf("detail %q quotes the endpoint", p.Detail)
		}
	}
	if res := h.postJSON(contract.PathSubscriptions, `{"endpoint":"https://hooks.example.com/hdc"}`, as...); res.StatusCode != 200 {
		t.Fatalf("public endpoint: %d %s", res.StatusCode, res.body)
	}
}

func TestSubscriptionLimit(t *testing.T) {
	h := start(t, func(c *Config) { c.WebhookMaxSubscriptions = 2 })
	as := h.as(h.login(h.client("acme"), ""))
	other := h.as(h.login(h.client("globex"), ""))
	register := func(as []string, n int) response {
		return h.postJSON(contract.PathSubscriptions, fmt.Sprintf(`{"endpoint":"https://hooks.example.com/%d"}`, n), as...)
	}
	var first webhook.Registered
	for n := range 2 {
		res := register(as, n)
		if res.StatusCode != 200 {
			t.Fatalf("subscription %d: %d %s", n, res.StatusCode, res.body)
		}
		res.json(t, &first)
	}
	wantProblem(t, register(as, 2), 409, "subscription_limit")
	if res := register(other, 2); res.StatusCode != 200 {
		t.Fatalf("another workspace is limited too: %d %s", res.StatusCode, res.body)
	}
	if res := h.do("DELETE", h.public+contract.PathSubscriptions+"/"+first.ID, nil, as...); res.StatusCode != 204 {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	if res := register(as, 2); res.StatusCode != 200 {
		t.Fatalf("after a delete: %d %s", res.StatusCode, res.body)
	}
}
