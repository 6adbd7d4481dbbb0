package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the driver the backend's SQLite store uses

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// requestLog is a receiver that verifies nothing: it records each request
// by path and answers 204.
type requestLog struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string][]recorded
}

func newRequestLog(t *testing.T) *requestLog {
	rl := &requestLog{got: map[string][]recorded{}}
	rl.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h := map[string]string{}
		for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature", "Eka-Webhook-Signature"} {
			h[strings.ToLower(name)] = r.Header.Get(name)
		}
		rl.mu.Lock()
		rl.got[r.URL.Path] = append(rl.got[r.URL.Path], recorded{Headers: h, Body: string(body)})
		rl.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rl.Close)
	return rl
}

func (rl *requestLog) at(path string) []recorded {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return append([]recorded(nil), rl.got[path]...)
}

// verifyNpm verifies deliveries, each with its Key, with the npm
// standardwebhooks and svix libraries, failing t unless each accepts all.
func verifyNpm(t *testing.T, ds []recorded) {
	t.Helper()
	in, _ := json.Marshal(ds)
	for _, lib := range []string{"standardwebhooks", "svix"} {
		out, err := hdctest.Node(t, in, "webhook.mjs", "verify", lib)
		if err != nil || strings.Contains(string(out), `"ok":false`) || !strings.Contains(string(out), `"ok":true`) {
			t.Fatalf("npm %s: %s %v", lib, out, err)
		}
	}
}

// TestWebhookEveryDeliverySigned (fifth review, finding 10): a
// subscription registered without a signing_key gets a Standard Webhooks
// secret, returned once in the registration's answer, and its deliveries
// are signed with it (verified by the npm standardwebhooks and svix
// libraries; in the eka format, under the secret's UTF-8 bytes as the
// original service's receivers read a key). The list says it has a key,
// the operator's view never shows it, and a client that gives its own
// key is not answered one.
func TestWebhookEveryDeliverySigned(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms")
	c := s.NewClient("signed")
	tk := s.Login(c, true, "")
	rl := newRequestLog(t)
	register := func(body string) (id, key string) {
		t.Helper()
		r := s.Send(c, true, "POST", hdctest.SubsPath, []byte(body), hdctest.Bearer(tk))
		var reg struct{ ID string }
		if r.Status != 200 || json.Unmarshal(r.Body, &reg) != nil {
			t.Fatalf("register %s: %s", body, r)
		}
		key, _ = r.JSON(t)["signing_key"].(string)
		s.Creds.Add("a webhook signing key", key)
		return reg.ID, key
	}
	stdID, stdKey := register(`{"endpoint":"` + rc(rl, "/std") + `","event_names":["appointment.created"]}`)
	ekaID, ekaKey := register(`{"endpoint":"` + rc(rl, "/eka") + `","event_names":["appointment.created"],"delivery_format":"eka"}`)
	for what, key := range map[string]string{"standard-webhooks": stdKey, "eka": ekaKey} {
		if raw, err := contract.SigningKeyBytes(key); !strings.HasPrefix(key, "whsec_") || err != nil || len(raw) != 32 {
			t.Fatalf("the %s registration's generated key %q: %v", what, key, err)
		}
	}
	_, given := register(`{"endpoint":"` + rc(rl, "/given") + `","signing_key":"a-key-the-client-chose"}`)
	if given != "" {
		t.Fatal("a registration with its own key was answered a key")
	}

	s.HDC(nil, "events", "publish", "--workspace", c.Workspace, "--type", "appointment.created", "--data", `{"appointment_id":"a-1"}`)
	testkit.Eventually(t, 30*time.Second, "both deliveries", func() bool { return len(rl.at("/std")) > 0 && len(rl.at("/eka")) > 0 })
	std := rl.at("/std")[0]
	std.Key = stdKey
	verifyNpm(t, []recorded{std})
	eka := rl.at("/eka")[0]
	sig := eka.Headers["eka-webhook-signature"]
	ts, v1, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1=")
	mac := hmac.New(sha256.New, []byte(ekaKey))
	mac.Write([]byte(ts + "." + eka.Body))
	if !hmac.Equal([]byte(v1), []byte(hex.EncodeToString(mac.Sum(nil)))) {
		t.Fatalf("the eka delivery's signature %q does not verify under its generated key", sig)
	}

	list := s.Send(c, true, "GET", hdctest.SubsPath, nil, hdctest.Bearer(tk))
	if strings.Contains(string(list.Body), `"has_signing_key":false`) || strings.Contains(string(list.Body), "whsec_") {
		t.Fatalf("the list: %s", list)
	}
	for _, id := range []string{stdID, ekaID} {
		out, _, err := s.HDCRun("subscriptions", "get", "--subscription", id)
		if err != nil || !strings.Contains(out, `"has_signing_key": true`) || strings.Contains(out, "whsec_") {
			t.Fatalf("the operator's view of %s: %v\n%s", id, err, out)
		}
	}
}

// rc is the URL of path on the receiver.
func rc(rl *requestLog, path string) string { return rl.URL + path }

// TestWebhookKeyBackfill (fifth review, finding 10): a subscription an
// earlier version stored without a signing key gets one, sealed, when the
// backend starts; its receiver, which verified nothing, still gets every
// delivery, now signed; the client learns a key by rotating it through
// the signing-key route, and the deliveries then verify with it (npm
// standardwebhooks and svix).
func TestWebhookKeyBackfill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	client := hdctest.CreateWebhookClient(t, dir, "backfill")
	rl := newRequestLog(t)
	b := hdctest.StartWebhookBackend(t, dir, hdctest.WebhookEnv...)
	id := b.Subscribe(client, `{"endpoint":"`+rc(rl, "/hook")+`","signing_key":"a-key-to-forget-0123"}`)
	b.Stop()
	// The row as an earlier version stored it: no key.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE subscriptions SET signing_key = NULL WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	db.Close()

	b = hdctest.StartWebhookBackend(t, dir, hdctest.WebhookEnv...)
	as := []string{contract.HeaderClientID, client.ClientID, contract.HeaderWorkspaceID, client.WorkspaceID}
	req, _ := http.NewRequest(http.MethodGet, b.Public+contract.PathSubscriptions, nil)
	hdctest.AsEdge(req)
	req.Header.Set(as[0], as[1])
	req.Header.Set(as[2], as[3])
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(listed), `"has_signing_key":true`) {
		t.Fatalf("after the upgrade, the subscription stored without a key is listed %s", listed)
	}
	publish := func(n string) {
		t.Helper()
		status, answer := b.Post(b.Internal+contract.PathEvents, `{"type":"appointment.created","workspace_id":"backfill","data":{"n":"`+n+`"}}`)
		if status != http.StatusAccepted {
			t.Fatalf("publish: %d %s", status, answer)
		}
	}
	publish("1")
	testkit.Eventually(t, 30*time.Second, "the first delivery", func() bool { return len(rl.at("/hook")) == 1 })
	if first := rl.at("/hook")[0]; first.Headers["webhook-signature"] == "" {
		t.Fatalf("a delivery of the upgraded subscription is unsigned: %+v", first)
	}

	status, answer := b.Post(b.Public+contract.PathSubscriptions+"/"+id+"/signing-key", `{}`, as...)
	var rot struct {
		SigningKey           string     `json:"signing_key"`
		PreviousKeyExpiresAt *time.Time `json:"previous_key_expires_at"`
	}
	if status != http.StatusOK || json.Unmarshal(answer, &rot) != nil || !strings.HasPrefix(rot.SigningKey, "whsec_") || rot.PreviousKeyExpiresAt == nil {
		t.Fatalf("the rotation: %d %s", status, answer)
	}
	publish("2")
	testkit.Eventually(t, 30*time.Second, "the second delivery", func() bool { return len(rl.at("/hook")) == 2 })
	second := rl.at("/hook")[1]
	second.Key = rot.SigningKey
	verifyNpm(t, []recorded{second})
}
