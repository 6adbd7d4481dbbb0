package tests

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// The end-to-end suite: the real binaries on loopback, driven over HTTP.
// Every JWE here is built and every encrypted answer decrypted by npm jose
// (tests/interop/jwe.mjs), never by our codec, so the suite proves that a
// standard client works against the whole system.

const (
	loginPath     = "/connect-auth/v1/account/login"
	refreshPath   = "/connect-auth/v1/account/refresh-token"
	retrievePath  = "/health/api/v1/fhir/retrieve"
	subsPath      = "/notification/v1/connect/webhook/subscriptions"
	uploadPath    = "/mr/api/v2/docs"
	jsonType      = "application/json"
	compactType   = "application/jose"
	problemType   = "application/problem+json"
	jweHeader     = "X-Encryption"
	jweKidHeader  = "X-Encryption-Kid"
	authorization = "Authorization"
)

// joseEncrypt makes a request envelope with npm jose.
func joseEncrypt(t testing.TB, c *apiClient, plaintext []byte) []byte {
	t.Helper()
	return npmJose.encrypt(t, c, formJSON, plaintext)
}

// send calls the edge as c, in plain or encrypted form. An encrypted
// request is made, and its answer opened, by npm jose (sendSealed).
func (s *stack) send(c *apiClient, encrypt bool, method, path string, body []byte, header map[string]string) *response {
	s.t.Helper()
	if encrypt {
		return s.sendSealed(sealedBy{npmJose, formJSON}, c, method, path, body, header)
	}
	s.creds.noteJSON(body)
	r := s.do(method, path, body, withBodyType(header, body))
	if r.header.Get(jweHeader) != "" {
		s.t.Fatalf("%s %s: a plain request got an encrypted answer", method, path)
	}
	return r
}

// sendSealed calls the edge as c with a request encrypted by v's client in
// v's form (a body-less one asks for an answer in that form), and opens
// the answer with the same client: an encrypted request must get an
// encrypted answer, in the form of the request.
func (s *stack) sendSealed(v sealedBy, c *apiClient, method, path string, body []byte, header map[string]string) *response {
	s.t.Helper()
	h := withBodyType(header, body)
	s.creds.noteJSON(body)
	h[jweHeader] = "JWE"
	if body == nil {
		h[jweKidHeader] = c.Kid
		if v.form == formCompact {
			h["Accept"] = compactType
		}
	} else {
		body = v.client.encrypt(s.t, c, v.form, body)
		h["Content-Type"] = v.requestType()
	}
	r := s.do(method, path, body, h)
	if len(r.body) == 0 && r.status == 204 {
		return r // nothing to seal: a body-less answer carries no envelope
	}
	if r.status == 401 && r.header.Get("Content-Type") == problemType && r.header.Get(jweHeader) == "" {
		return r // refused by the edge's token check, before any key is established: plain by design
	}
	if r.header.Get(jweHeader) != "JWE" {
		s.t.Fatalf("%s %s: an encrypted request got a plain answer: %s", method, path, r)
	}
	if got, want := r.header.Get("Content-Type"), v.answerType(); got != want {
		s.t.Fatalf("%s %s: the answer to a %s request is %s, want %s", method, path, v.form, got, want)
	}
	r.body, r.sealed = v.client.decrypt(s.t, c, v.form, r.body), true
	s.creds.noteJSON(r.body)
	return r
}

// withBodyType copies header, adding Content-Type application/json when
// there is a body and none is named.
func withBodyType(header map[string]string, body []byte) map[string]string {
	h := map[string]string{}
	for k, v := range header {
		h[k] = v
	}
	if body != nil && h["Content-Type"] == "" {
		h["Content-Type"] = jsonType
	}
	return h
}

// tokens is a login or refresh answer.
type tokens struct {
	AccessToken      string `json:"access_token"`
	ExpiresIn        int    `json:"expires_in"`
	RefreshToken     string `json:"refresh_token"`
	RefreshExpiresIn int    `json:"refresh_expires_in"`
}

func (s *stack) login(c *apiClient, encrypt bool, sharingKey string) tokens {
	s.t.Helper()
	body := map[string]string{"client_id": c.ID, "client_secret": c.Secret}
	if sharingKey != "" {
		body["sharing_key"] = sharingKey
	}
	b, _ := json.Marshal(body)
	r := s.send(c, encrypt, "POST", loginPath, b, nil)
	if r.status != 200 {
		s.t.Fatalf("login: %s", r)
	}
	var tk tokens
	if err := json.Unmarshal(r.body, &tk); err != nil || tk.AccessToken == "" || tk.RefreshToken == "" ||
		tk.ExpiresIn != 1800 || tk.RefreshExpiresIn != 30*24*3600 {
		s.t.Fatalf("login answered %s", r)
	}
	return tk
}

func bearer(tk tokens) map[string]string {
	return map[string]string{authorization: "Bearer " + tk.AccessToken}
}

// expectProblem checks a problem+json answer with the given status and code.
func expectProblem(t testing.TB, r *response, status int, code string) {
	t.Helper()
	header := r.header
	if r.sealed { // the envelope is application/json, whatever it seals
		header = header.Clone()
		header.Set("Content-Type", problem.ContentType)
	}
	testkit.WantProblem(t, r.status, header, r.body, status, code)
}

func multipartUpload(file []byte) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, _ := w.CreateFormFile("file", "consultation.bin")
	_, _ = part.Write(file)
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func jsonUpload(file []byte) []byte {
	return []byte(`{"file":"` + base64.StdEncoding.EncodeToString(file) + `"}`)
}

// upload sends a file, multipart when plain and as the encrypted JSON form
// when encrypted, and returns the care_context_id.
func (s *stack) upload(c *apiClient, tk tokens, encrypt bool, file []byte, query string) string {
	s.t.Helper()
	var r *response
	if encrypt {
		r = s.send(c, true, "POST", uploadPath+query, jsonUpload(file), bearer(tk))
	} else {
		body, ctype := multipartUpload(file)
		h := bearer(tk)
		h["Content-Type"] = ctype
		r = s.send(c, false, "POST", uploadPath+query, body, h)
	}
	m := r.json(s.t)
	id, _ := m["care_context_id"].(string)
	if r.status != 200 || id == "" || m["document_id"] == nil || m["status"] == nil {
		s.t.Fatalf("upload: %s", r)
	}
	return id
}

// retrieve fetches a record's Bundle, checks it with npm fhir and fhirpath,
// and checks that its DocumentReference describes file.
func (s *stack) retrieve(c *apiClient, tk tokens, encrypt bool, id string, file []byte) map[string]any {
	s.t.Helper()
	r := s.send(c, encrypt, "GET", retrievePath+"?identifier="+url.QueryEscape(id), nil, bearer(tk))
	return checkRecord(s.t, r, file)
}

// checkRecord checks a retrieve answer: a Bundle that npm fhir and fhirpath
// accept, whose DocumentReference describes file.
func checkRecord(t testing.TB, r *response, file []byte) map[string]any {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("retrieve: %s", r)
	}
	if out, err := node(t, r.body, "fhir.mjs"); err != nil {
		t.Fatalf("the Bundle fails npm fhir/fhirpath: %v\n%s", err, out)
	}
	bundle := r.json(t)
	sum := sha1.Sum(file)
	var found bool
	for _, e := range bundle["entry"].([]any) {
		res := e.(map[string]any)["resource"].(map[string]any)
		if res["resourceType"] != "DocumentReference" {
			continue
		}
		att := res["content"].([]any)[0].(map[string]any)["attachment"].(map[string]any)
		if att["size"] != float64(len(file)) || att["hash"] != base64.StdEncoding.EncodeToString(sum[:]) {
			t.Fatalf("DocumentReference says size %v hash %v; the file has %d bytes, SHA-1 %s",
				att["size"], att["hash"], len(file), base64.StdEncoding.EncodeToString(sum[:]))
		}
		found = true
	}
	if !found {
		t.Fatal("no DocumentReference in the Bundle")
	}
	return bundle
}

// TestE2EEndpoints calls every endpoint of the spec, plain and encrypted.
func TestE2EEndpoints(t *testing.T) {
	s := startStack(t)
	c := s.newClient("clinic-a")
	for _, encrypt := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypted=%v", encrypt), func(t *testing.T) {
			s.t = t
			tk := s.login(c, encrypt, "")

			// Register, list and delete a webhook subscription.
			endpoint := fmt.Sprintf("https://hooks.example.org/%v", encrypt)
			sub := s.send(c, encrypt, "POST", subsPath, []byte(`{"endpoint":"`+endpoint+`","event_names":["appointment.created"],"signing_key":"0123456789abcdef0123"}`), bearer(tk))
			m := sub.json(t)
			if sub.status != 200 || m["status"] != "success" || m["id"] == "" {
				t.Fatalf("register: %s", sub)
			}
			list := s.send(c, encrypt, "GET", subsPath, nil, bearer(tk))
			if list.status != 200 || !bytes.Contains(list.body, []byte(endpoint)) || bytes.Contains(list.body, []byte("0123456789abcdef0123")) {
				t.Fatalf("list: %s", list)
			}
			dup := s.send(c, encrypt, "POST", subsPath, []byte(`{"endpoint":"`+endpoint+`"}`), bearer(tk))
			expectProblem(t, dup, 409, "conflict")
			del := s.send(c, encrypt, "DELETE", subsPath+"/"+m["id"].(string), nil, bearer(tk))
			if del.status != 204 && del.status != 200 {
				t.Fatalf("delete: %s", del)
			}

			// Upload, then retrieve the record as a FHIR document.
			file := []byte(fmt.Sprintf("consultation audio, encrypted=%v", encrypt))
			id := s.upload(c, tk, encrypt, file, "?task=smart&task=pii")
			s.retrieve(c, tk, encrypt, id, file)
			expectProblem(t, s.send(c, encrypt, "GET", retrievePath+"?identifier=no-such-record", nil, bearer(tk)), 404, "not_found")
			expectProblem(t, s.send(c, encrypt, "POST", uploadPath+"?task=astrology", jsonUpload(file), bearer(tk)), 400, "invalid_task")

			// Refresh rotates; the old refresh token, used again, revokes the family.
			refresh := func(old tokens, clientID string) *response {
				b, _ := json.Marshal(map[string]string{"refresh_token": old.RefreshToken, "access_token": old.AccessToken})
				h := bearer(old)
				h["Client-Id"] = clientID
				return s.send(c, encrypt, "POST", refreshPath, b, h)
			}
			r := refresh(tk, c.ID)
			var next tokens
			if r.status != 200 || json.Unmarshal(r.body, &next) != nil || next.RefreshToken == tk.RefreshToken || next.AccessToken == "" {
				t.Fatalf("refresh: %s", r)
			}
			expectProblem(t, refresh(tk, c.ID), 401, "invalid_refresh_token")
			expectProblem(t, refresh(next, c.ID), 401, "invalid_refresh_token") // the family is revoked
			expectProblem(t, refresh(next, "someone-else"), 401, "client_mismatch")
		})
	}
}

// TestE2ELargeUploads sends a 24 MiB file both ways; the retrieved
// DocumentReference must carry its size and SHA-1.
func TestE2ELargeUploads(t *testing.T) {
	s := startStack(t)
	c := s.newClient("clinic-big")
	tk := s.login(c, false, "")
	file := make([]byte, 24<<20)
	_, _ = rand.Read(file)
	for _, encrypt := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypted=%v", encrypt), func(t *testing.T) {
			defer func(parent *testing.T) { s.t = parent }(s.t)
			s.t = t
			id := s.upload(c, tk, encrypt, file, "")
			s.retrieve(c, tk, false, id, file)
		})
	}
}

// TestE2ETenants: sharing grants open exactly their workspace, and nothing
// of one workspace is reachable with another's identity or keys.
func TestE2ETenants(t *testing.T) {
	s := startStack(t)
	a, b := s.newClient("ws-a"), s.newClient("ws-b")
	ta, tb := s.login(a, false, ""), s.login(b, true, "")

	fileB := []byte("workspace b's consultation")
	recB := s.upload(b, tb, true, fileB, "")
	subB := s.send(b, false, "POST", subsPath, []byte(`{"endpoint":"https://b.example.org/hook"}`), bearer(tb)).json(t)["id"].(string)

	// A's own identity sees nothing of B.
	expectProblem(t, s.send(a, false, "GET", retrievePath+"?identifier="+recB, nil, bearer(ta)), 404, "not_found")
	expectProblem(t, s.send(a, true, "GET", retrievePath+"?identifier="+recB, nil, bearer(ta)), 404, "not_found")
	expectProblem(t, s.send(a, false, "DELETE", subsPath+"/"+subB, nil, bearer(ta)), 404, "not_found")
	if list := s.send(a, false, "GET", subsPath, nil, bearer(ta)); bytes.Contains(list.body, []byte("b.example.org")) {
		t.Fatalf("A lists B's subscription: %s", list)
	}
	// B's key, A's token: refused uniformly; B's refresh token: refused.
	ab := &apiClient{ID: a.ID, Secret: a.Secret, Kid: b.Kid, Key: b.Key}
	r := s.do("POST", subsPath, joseEncrypt(t, ab, []byte(`{"endpoint":"https://x.example.org"}`)),
		map[string]string{authorization: "Bearer " + ta.AccessToken, jweHeader: "JWE", "Content-Type": jsonType})
	expectProblem(t, r, 400, "invalid_encryption")
	rb, _ := json.Marshal(map[string]string{"refresh_token": tb.RefreshToken})
	expectProblem(t, s.send(a, false, "POST", refreshPath, rb, map[string]string{authorization: "Bearer " + ta.AccessToken, "Client-Id": a.ID}), 401, "invalid_refresh_token")
	// A token is bound to its workspace: an identity header naming B changes nothing.
	h := bearer(ta)
	h["X-HDC-Workspace-Id"] = b.Workspace
	expectProblem(t, s.send(a, false, "GET", retrievePath+"?identifier="+recB, nil, h), 404, "not_found")
	// A login with a sharing key that was not granted to A fails.
	var grant struct {
		SharingKey string `json:"sharing_key"`
	}
	s.hdc(&grant, "sharing", "grant", "--workspace", b.Workspace, "--client", a.ID)
	other := s.newClient("ws-c")
	bad, _ := json.Marshal(map[string]string{"client_id": other.ID, "client_secret": other.Secret, "sharing_key": grant.SharingKey})
	expectProblem(t, s.send(other, false, "POST", loginPath, bad, nil), 401, "invalid_sharing_key")

	// With the grant, A works in B's workspace, and only there.
	shared := s.login(a, true, grant.SharingKey)
	s.retrieve(a, shared, true, recB, fileB)
	if list := s.send(a, false, "GET", subsPath, nil, bearer(shared)); !bytes.Contains(list.body, []byte("b.example.org")) {
		t.Fatalf("the shared token does not see B's subscriptions: %s", list)
	}
	recA := s.upload(a, ta, false, []byte("a's own file"), "")
	expectProblem(t, s.send(a, false, "GET", retrievePath+"?identifier="+recA, nil, bearer(shared)), 404, "not_found")
}

// TestE2EHostileThroughTheEdge: a few of the edge's refusals, seen from a
// client of the real stack, all problem+json.
func TestE2EHostileThroughTheEdge(t *testing.T) {
	s := startStack(t)
	c := s.newClient("clinic-h")
	tk := s.login(c, false, "")
	good := joseEncrypt(t, c, []byte(`{"endpoint":"https://h.example.org"}`))
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
		{"no token", []byte(`{}`), map[string]string{"Content-Type": jsonType}, 401, "missing_token"},
		{"bad envelope", []byte(`{"protected":1}`), map[string]string{authorization: "Bearer " + tk.AccessToken, jweHeader: "JWE", "Content-Type": jsonType}, 400, "invalid_envelope"},
		{"tampered tag", tampered, map[string]string{authorization: "Bearer " + tk.AccessToken, jweHeader: "JWE", "Content-Type": jsonType}, 400, "invalid_encryption"},
		{"forged identity", []byte(`{}`), map[string]string{"X-HDC-Client-Id": c.ID, "X-HDC-Workspace-Id": c.Workspace, "Content-Type": jsonType}, 401, "missing_token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func(parent *testing.T) { s.t = parent }(s.t)
			s.t = t
			r := s.do("POST", subsPath, tc.body, tc.header)
			if r.header.Get("Content-Type") != problemType {
				t.Fatalf("%s: not problem+json: %s", tc.name, r)
			}
			expectProblem(t, r, tc.status, tc.code)
		})
	}
	expectProblem(t, s.do("GET", loginPath, nil, nil), 405, "method_not_allowed")
}

// TestE2EWebhooks: a subscription registered through the edge (encrypted,
// by jose) gets the events published for its workspace, signed; npm
// standardwebhooks verifies every delivery. Events of other types and of
// other workspaces do not reach it.
func TestE2EWebhooks(t *testing.T) {
	s := startStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms")
	a, b := s.newClient("hooks-a"), s.newClient("hooks-b")
	const key = "whsec-for-the-e2e-suite"
	rc := newWebhookReceiver(t, key, 0)
	ta, tb := s.login(a, true, ""), s.login(b, false, "")
	sub := s.send(a, true, "POST", subsPath, []byte(`{"endpoint":"`+rc.srv.URL+`/a","protocol":"http",`+
		`"event_names":["appointment.created","user.delete"],"signing_key":"`+key+`"}`), bearer(ta))
	if sub.status != 200 || sub.json(t)["status"] != "success" {
		t.Fatalf("register through the edge: %s", sub)
	}
	// B subscribes the same receiver under another path, for everything.
	if r := s.send(b, false, "POST", subsPath, []byte(`{"endpoint":"`+rc.srv.URL+`/b"}`), bearer(tb)); r.status != 200 {
		t.Fatalf("register B: %s", r)
	}
	publish := func(ws, typ, data string) {
		s.hdc(nil, "events", "publish", "--workspace", ws, "--type", typ, "--data", data)
	}
	publish(a.Workspace, "appointment.created", `{"appointment_id":"a-1"}`)
	publish(a.Workspace, "user.delete", `{"user_id":"u-1"}`)
	publish(a.Workspace, "receipt.created", `{"receipt_id":"r-1"}`) // not subscribed
	publish(b.Workspace, "prescription.created", `{"prescription_id":"p-1"}`)

	testkit.Eventually(t, time.Minute, "three deliveries", func() bool { return len(rc.deliveries()) >= 3 })
	time.Sleep(500 * time.Millisecond) // anything that should not come has had its chance
	var toA []webhookDelivery
	var toB int
	for _, d := range rc.deliveries() {
		switch d.path {
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
		checks = append(checks, check{key, map[string]string{"webhook-id": d.header.Get("webhook-id"),
			"webhook-timestamp": d.header.Get("webhook-timestamp"), "webhook-signature": d.header.Get("webhook-signature")}, string(d.body)})
	}
	// The control: a body changed after signing must be refused.
	bad := checks[0]
	bad.Body = strings.Replace(bad.Body, "a-1", "a-2", 1)
	in, _ := json.Marshal(append(checks, bad))
	out, err := node(t, in, "webhook.mjs", "verify")
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
	list := s.send(a, true, "GET", subsPath, nil, bearer(ta))
	if !bytes.Contains(list.body, []byte(`"last_delivery_outcome"`)) || !bytes.Contains(list.body, []byte(`"active"`)) {
		t.Fatalf("list after delivery: %s", list)
	}
}

// TestE2EKeyRotation rotates a client's key with `hdc keys rotate` while
// encrypted requests run (their JWE built by jose): requests with the old
// key keep working while it is retiring, the new key works as soon as the
// client has it, and after every client switched the old key is retired.
// Nothing fails until then; afterwards the retired key is refused.
func TestE2EKeyRotation(t *testing.T) {
	s := startStack(t)
	c := s.newClient("rotation")
	rotateUnderLoad(t, s, []*stack{s}, c, s.login(c, false, ""))
}

// rotateUnderLoad rotates c's key with hdc keys (run by ops) and retires
// the old one while three workers upload through edges, the client taking
// the new key as soon as the rotation returns: no request may fail. Then
// the retired key is refused by every edge.
func rotateUnderLoad(t *testing.T, ops *stack, edges []*stack, c *apiClient, tk tokens) {
	t.Helper()
	upload := func(e *stack, k *apiClient, text string) *response {
		return e.do("POST", uploadPath, joseEncrypt(t, k, jsonUpload([]byte(text))), map[string]string{
			authorization: "Bearer " + tk.AccessToken, jweHeader: "JWE", "Content-Type": jsonType})
	}
	var current atomic.Pointer[apiClient]
	current.Store(c)
	old := c
	var sent, failed atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := current.Load()
				r := upload(edges[(w+i)%len(edges)], k, fmt.Sprintf("worker %d, file %d", w, i))
				sent.Add(1)
				if r.status != 200 || r.header.Get(jweHeader) != "JWE" {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%s: %s", k.Kid, r))
				}
			}
		})
	}
	time.Sleep(2 * time.Second)
	var rotated struct{ Kid, Secret string }
	ops.hdc(&rotated, "keys", "rotate", "--client", c.ID)
	next := *c
	next.Kid, next.Key = rotated.Kid, rotated.Secret
	current.Store(&next) // the client takes the new key at once
	time.Sleep(2 * time.Second)
	ops.hdc(nil, "keys", "retire", "--kid", old.Kid)
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	if sent.Load() < 30 {
		t.Fatalf("only %d requests ran", sent.Load())
	}
	if failed.Load() != 0 {
		t.Fatalf("%d of %d requests failed during the rotation; first: %v", failed.Load(), sent.Load(), firstFailure.Load())
	}
	t.Logf("%d encrypted uploads through %d edge(s) during rotate and retire, none failed", sent.Load(), len(edges))
	// The control: the retired key is refused now, by every edge.
	for i, e := range edges {
		testkit.Eventually(t, 10*time.Second, fmt.Sprintf("edge %d to refuse the retired key", i+1), func() bool {
			return upload(e, old, "late").status == http.StatusBadRequest
		})
		expectProblem(t, upload(e, old, "late"), 400, "invalid_encryption")
	}
	c.Kid, c.Key = next.Kid, next.Key
}

// TestEdgeBinary: hdc-edge is Caddy's command line with our modules.
func TestEdgeBinary(t *testing.T) {
	edge := binary(t, "hdc-edge")
	out, err := runProgram(t, nil, edge, "list-modules")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"hdc", "http.handlers.hdc_auth", "http.handlers.hdc_jwe", "admin.api.hdc", "http.handlers.reverse_proxy"} {
		t.Run(m, func(t *testing.T) {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m) + `$`).Match(out) {
				t.Fatalf("list-modules lacks %s", m)
			}
		})
	}
	cfg, err := runProgram(t, nil, edge, "adapt", "--config", filepath.Join(repoRoot, "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(cfg, []byte(`"handler":"hdc_jwe"`)) || !bytes.Contains(cfg, []byte(`"hdc":{`)) {
		t.Fatalf("adapt output lacks the hdc app or handlers: %.300s", cfg)
	}
}
