package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestE2EEndpoints calls every endpoint of the spec, plain and encrypted.
func TestE2EEndpoints(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("clinic-a")
	for _, encrypt := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypted=%v", encrypt), func(t *testing.T) {
			t.Parallel()
			s := s.For(t)
			tk := s.Login(c, encrypt, "")

			// Register, list and delete a webhook subscription.
			endpoint := fmt.Sprintf("https://hooks.example.org/%v", encrypt)
			sub := s.Send(c, encrypt, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+endpoint+`","event_names":["appointment.created"],"signing_key":"0123456789abcdef0123"}`), hdctest.Bearer(tk))
			m := sub.JSON(t)
			if sub.Status != 200 || m["status"] != "success" || m["id"] == "" {
				t.Fatalf("register: %s", sub)
			}
			list := s.Send(c, encrypt, "GET", hdctest.SubsPath, nil, hdctest.Bearer(tk))
			if list.Status != 200 || !bytes.Contains(list.Body, []byte(endpoint)) || bytes.Contains(list.Body, []byte("0123456789abcdef0123")) {
				t.Fatalf("list: %s", list)
			}
			dup := s.Send(c, encrypt, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+endpoint+`"}`), hdctest.Bearer(tk))
			hdctest.ExpectProblem(t, dup, 409, "conflict")
			del := s.Send(c, encrypt, "DELETE", hdctest.SubsPath+"/"+m["id"].(string), nil, hdctest.Bearer(tk))
			if del.Status != 204 && del.Status != 200 {
				t.Fatalf("delete: %s", del)
			}

			// Upload, then retrieve the record as a FHIR document.
			file := []byte(fmt.Sprintf("consultation audio, encrypted=%v", encrypt))
			id := s.Upload(c, tk, encrypt, file, "?task=smart&task=pii")
			s.Retrieve(c, tk, encrypt, id, file)
			hdctest.ExpectProblem(t, s.Send(c, encrypt, "GET", hdctest.RetrievePath+"?identifier=no-such-record", nil, hdctest.Bearer(tk)), 404, "not_found")
			hdctest.ExpectProblem(t, s.Send(c, encrypt, "POST", hdctest.UploadPath+"?task=astrology", hdctest.JSONUpload(file), hdctest.Bearer(tk)), 400, "invalid_task")

			// Refresh rotates; the old refresh token, used again, revokes the family.
			refresh := func(old hdctest.Tokens, clientID string) *hdctest.Response {
				b, _ := json.Marshal(map[string]string{"refresh_token": old.RefreshToken, "access_token": old.AccessToken})
				h := hdctest.Bearer(old)
				h["Client-Id"] = clientID
				return s.Send(c, encrypt, "POST", hdctest.RefreshPath, b, h)
			}
			r := refresh(tk, c.ID)
			var next hdctest.Tokens
			if r.Status != 200 || json.Unmarshal(r.Body, &next) != nil || next.RefreshToken == tk.RefreshToken || next.AccessToken == "" {
				t.Fatalf("refresh: %s", r)
			}
			hdctest.ExpectProblem(t, refresh(tk, c.ID), 401, "invalid_refresh_token")
			hdctest.ExpectProblem(t, refresh(next, c.ID), 401, "invalid_refresh_token") // the family is revoked
			hdctest.ExpectProblem(t, refresh(next, "someone-else"), 401, "client_mismatch")
		})
	}
}

// TestE2ELargeUploads sends a 24 MiB file both ways; the retrieved
// DocumentReference must carry its size and SHA-1.
func TestE2ELargeUploads(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("clinic-big")
	tk := s.Login(c, false, "")
	file := make([]byte, 24<<20)
	_, _ = rand.Read(file)
	for _, encrypt := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypted=%v", encrypt), func(t *testing.T) {
			t.Parallel()
			s := s.For(t)
			id := s.Upload(c, tk, encrypt, file, "")
			s.Retrieve(c, tk, false, id, file)
		})
	}
}

// TestE2ETenants: sharing grants open exactly their workspace, and nothing
// of one workspace is reachable with another's identity or keys.
func TestE2ETenants(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	a, b := s.NewClient("ws-a"), s.NewClient("ws-b")
	ta, tb := s.Login(a, false, ""), s.Login(b, true, "")

	fileB := []byte("workspace b's consultation")
	recB := s.Upload(b, tb, true, fileB, "")
	subB := s.Send(b, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"https://b.example.org/hook"}`), hdctest.Bearer(tb)).JSON(t)["id"].(string)

	// A's own identity sees nothing of B.
	hdctest.ExpectProblem(t, s.Send(a, false, "GET", hdctest.RetrievePath+"?identifier="+recB, nil, hdctest.Bearer(ta)), 404, "not_found")
	hdctest.ExpectProblem(t, s.Send(a, true, "GET", hdctest.RetrievePath+"?identifier="+recB, nil, hdctest.Bearer(ta)), 404, "not_found")
	hdctest.ExpectProblem(t, s.Send(a, false, "DELETE", hdctest.SubsPath+"/"+subB, nil, hdctest.Bearer(ta)), 404, "not_found")
	if list := s.Send(a, false, "GET", hdctest.SubsPath, nil, hdctest.Bearer(ta)); bytes.Contains(list.Body, []byte("b.example.org")) {
		t.Fatalf("A lists B's subscription: %s", list)
	}
	// B's key, A's token: refused uniformly; B's refresh token: refused.
	ab := &hdctest.APIClient{ID: a.ID, Secret: a.Secret, Kid: b.Kid, Key: b.Key}
	r := s.Do("POST", hdctest.SubsPath, hdctest.JoseEncrypt(t, ab, []byte(`{"endpoint":"https://x.example.org"}`)),
		map[string]string{hdctest.Authorization: "Bearer " + ta.AccessToken, hdctest.JWEHeader: "JWE", "Content-Type": hdctest.JSONType})
	hdctest.ExpectProblem(t, r, 400, "invalid_encryption")
	rb, _ := json.Marshal(map[string]string{"refresh_token": tb.RefreshToken})
	hdctest.ExpectProblem(t, s.Send(a, false, "POST", hdctest.RefreshPath, rb, map[string]string{hdctest.Authorization: "Bearer " + ta.AccessToken, "Client-Id": a.ID}), 401, "invalid_refresh_token")
	// A token is bound to its workspace: an identity header naming B changes nothing.
	h := hdctest.Bearer(ta)
	h["X-HDC-Workspace-Id"] = b.Workspace
	hdctest.ExpectProblem(t, s.Send(a, false, "GET", hdctest.RetrievePath+"?identifier="+recB, nil, h), 404, "not_found")
	// A login with a sharing key that was not granted to A fails.
	var grant struct {
		SharingKey string `json:"sharing_key"`
	}
	s.HDC(&grant, "sharing", "grant", "--workspace", b.Workspace, "--client", a.ID)
	other := s.NewClient("ws-c")
	bad, _ := json.Marshal(map[string]string{"client_id": other.ID, "client_secret": other.Secret, "sharing_key": grant.SharingKey})
	hdctest.ExpectProblem(t, s.Send(other, false, "POST", hdctest.LoginPath, bad, nil), 401, "invalid_sharing_key")

	// With the grant, A works in B's workspace, and only there.
	shared := s.Login(a, true, grant.SharingKey)
	s.Retrieve(a, shared, true, recB, fileB)
	if list := s.Send(a, false, "GET", hdctest.SubsPath, nil, hdctest.Bearer(shared)); !bytes.Contains(list.Body, []byte("b.example.org")) {
		t.Fatalf("the shared token does not see B's subscriptions: %s", list)
	}
	recA := s.Upload(a, ta, false, []byte("a's own file"), "")
	hdctest.ExpectProblem(t, s.Send(a, false, "GET", hdctest.RetrievePath+"?identifier="+recA, nil, hdctest.Bearer(shared)), 404, "not_found")
}

// TestE2EHostileThroughTheEdge: a few of the edge's refusals, seen from a
// client of the real stack, all problem+json.
func TestE2EHostileThroughTheEdge(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("clinic-h")
	tk := s.Login(c, false, "")
	good := hdctest.JoseEncrypt(t, c, []byte(`{"endpoint":"https://h.example.org"}`))
	var env map[string]any
	if err := json.Unmarshal(good, &env); err != nil {
		t.Fatal(err)
	}
	tag, err := base64.RawURLEncoding.DecodeString(env["tag"].(string))
	if err != nil {
		t.Fatal(err)
	}
	tag[0] ^= 1 // another tag, still well-formed
	env["tag"] = base64.RawURLEncoding.EncodeToString(tag)
	tampered, _ := json.Marshal(env)
	cases := []struct {
		name   string
		body   []byte
		header map[string]string
		status int
		code   string
	}{
		{"no token", []byte(`{}`), map[string]string{"Content-Type": hdctest.JSONType}, 401, "missing_token"},
		{"bad envelope", []byte(`{"protected":1}`), map[string]string{hdctest.Authorization: "Bearer " + tk.AccessToken, hdctest.JWEHeader: "JWE", "Content-Type": hdctest.JSONType}, 400, "invalid_envelope"},
		{"tampered tag", tampered, map[string]string{hdctest.Authorization: "Bearer " + tk.AccessToken, hdctest.JWEHeader: "JWE", "Content-Type": hdctest.JSONType}, 400, "invalid_encryption"},
		{"forged identity", []byte(`{}`), map[string]string{"X-HDC-Client-Id": c.ID, "X-HDC-Workspace-Id": c.Workspace, "Content-Type": hdctest.JSONType}, 401, "missing_token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func(parent *testing.T) { s.T = parent }(s.T)
			s.T = t
			r := s.Do("POST", hdctest.SubsPath, tc.body, tc.header)
			if r.Header.Get("Content-Type") != hdctest.ProblemType {
				t.Fatalf("%s: not problem+json: %s", tc.name, r)
			}
			hdctest.ExpectProblem(t, r, tc.status, tc.code)
		})
	}
	hdctest.ExpectProblem(t, s.Do("GET", hdctest.LoginPath, nil, nil), 405, "method_not_allowed")
}

// TestE2EWebhooks: a subscription registered through the edge (encrypted,
// by jose) gets the events published for its workspace, signed; npm
// standardwebhooks verifies every delivery. Events of other types and of
// other workspaces do not reach it.
func TestE2EWebhooks(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms")
	a, b := s.NewClient("hooks-a"), s.NewClient("hooks-b")
	const key = "whsec-for-the-e2e-suite"
	rc := hdctest.NewWebhookReceiver(t, key, 0)
	ta, tb := s.Login(a, true, ""), s.Login(b, false, "")
	sub := s.Send(a, true, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+rc.Srv.URL+`/a","protocol":"http",`+
		`"event_names":["appointment.created","user.delete"],"signing_key":"`+key+`"}`), hdctest.Bearer(ta))
	if sub.Status != 200 || sub.JSON(t)["status"] != "success" {
		t.Fatalf("register through the edge: %s", sub)
	}
	// B subscribes the same receiver under another path, for everything.
	if r := s.Send(b, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+rc.Srv.URL+`/b"}`), hdctest.Bearer(tb)); r.Status != 200 {
		t.Fatalf("register B: %s", r)
	}
	publish := func(ws, typ, data string) {
		s.HDC(nil, "events", "publish", "--workspace", ws, "--type", typ, "--data", data)
	}
	publish(a.Workspace, "appointment.created", `{"appointment_id":"a-1"}`)
	publish(a.Workspace, "user.delete", `{"user_id":"u-1"}`)
	publish(a.Workspace, "receipt.created", `{"receipt_id":"r-1"}`) // not subscribed
	publish(b.Workspace, "prescription.created", `{"prescription_id":"p-1"}`)

	// Once nothing is pending, anything that should not come would have.
	testkit.Eventually(t, time.Minute, "three deliveries and nothing pending", func() bool {
		return len(rc.Deliveries()) >= 3 && s.QueueDepth() == 0
	})
	var toA []hdctest.WebhookDelivery
	var toB int
	for _, d := range rc.Deliveries() {
		switch d.Path {
		case "/a":
			toA = append(toA, d)
		case "/b":
			toB++
		}
	}
	if len(toA) != 2 || toB != 1 {
		t.Fatalf("A's endpoint got %d deliveries (want 2), B's %d (want 1)", len(toA), toB)
	}
	type check struct {
		Key     string            `json:"key"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	var checks []check
	for _, d := range toA {
		checks = append(checks, check{key, map[string]string{"webhook-id": d.Header.Get("webhook-id"),
			"webhook-timestamp": d.Header.Get("webhook-timestamp"), "webhook-signature": d.Header.Get("webhook-signature")}, string(d.Body)})
	}
	// The control: a body changed after signing must be refused.
	bad := checks[0]
	bad.Body = strings.Replace(bad.Body, "a-1", "a-2", 1)
	in, _ := json.Marshal(append(checks, bad))
	out, err := hdctest.Node(t, in, "webhook.mjs", "verify")
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		OK      bool           `json:"ok"`
		Payload map[string]any `json:"payload"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != 3 {
		t.Fatalf("webhook.mjs printed %s", out)
	}
	types := map[any]bool{}
	for _, r := range results[:2] {
		if !r.OK {
			t.Fatalf("npm standardwebhooks refused a delivery: %s", out)
		}
		types[r.Payload["type"]] = true
	}
	if !types["appointment.created"] || !types["user.delete"] {
		t.Fatalf("delivered types %v", types)
	}
	if results[2].OK {
		t.Fatal("npm standardwebhooks accepted a tampered body")
	}
	// The subscription's status shows the last delivery.
	list := s.Send(a, true, "GET", hdctest.SubsPath, nil, hdctest.Bearer(ta))
	if !bytes.Contains(list.Body, []byte(`"last_delivery_outcome"`)) || !bytes.Contains(list.Body, []byte(`"active"`)) {
		t.Fatalf("list after delivery: %s", list)
	}
}

// TestE2EKeyRotation rotates a client's key with `hdc keys rotate` while
// encrypted requests run (their JWE built by jose): requests with the old
// key keep working while it is retiring, the new key works as soon as the
// client has it, and after every client switched the old key is retired.
// Nothing fails until then; afterwards the retired key is refused.
func TestE2EKeyRotation(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("rotation")
	hdctest.RotateUnderLoad(t, s, []*hdctest.Stack{s}, c, s.Login(c, false, ""))
}

// TestEdgeBinary: hdc-edge is Caddy's command line with every one of our
// modules, each a package of its own, and Caddy's standard ones.
func TestEdgeBinary(t *testing.T) {
	t.Parallel()
	edge := hdctest.Binary(t, "hdc-edge")
	out, err := hdctest.RunProgram(t, nil, edge, "list-modules")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"hdc", "admin.api.hdc", "caddy.listeners.hdc_framing", "http.handlers.hdc_auth",
		"http.handlers.hdc_ratelimit", "http.handlers.hdc_jwe", "http.handlers.hdc_forward", "http.handlers.hdc_site",
		"http.handlers.hdc_tracing", "http.handlers.reverse_proxy"} {
		t.Run(m, func(t *testing.T) {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m) + `$`).Match(out) {
				t.Fatalf("list-modules lacks %s", m)
			}
		})
	}
	cfg, err := hdctest.RunProgram(t, nil, edge, "adapt", "--config", filepath.Join(hdctest.RepoRoot, "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(cfg, []byte(`"handler":"hdc_jwe"`)) || !bytes.Contains(cfg, []byte(`"hdc":{`)) {
		t.Fatalf("adapt output lacks the hdc app or handlers: %.300s", cfg)
	}
}
