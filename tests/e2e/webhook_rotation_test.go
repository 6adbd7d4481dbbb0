package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// rotationGrace is the grace of the rotation test's keys.
const rotationGrace = 5 * time.Second

// switchingReceiver verifies every delivery with the one key it holds,
// which it switches as a receiver does, and answers 204, or 401 to a
// delivery that does not verify (a rejection).
type switchingReceiver struct {
	srv      *httptest.Server
	rejected atomic.Int64

	mu  sync.Mutex
	key string
	got []heldDelivery
}

// heldDelivery is a delivery and the key it was verified with.
type heldDelivery struct {
	key    string
	at     time.Time
	header http.Header
	body   []byte
}

func newSwitchingReceiver(t *testing.T, key string) *switchingReceiver {
	rc := &switchingReceiver{key: key}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		key := rc.key
		rc.got = append(rc.got, heldDelivery{key: key, at: time.Now(), header: r.Header.Clone(), body: body})
		rc.mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(key)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		if err != nil {
			rc.rejected.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// use switches the receiver to key.
func (rc *switchingReceiver) use(key string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.key = key
}

// deliveries are what the receiver got, in order.
func (rc *switchingReceiver) deliveries() []heldDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]heldDelivery(nil), rc.got...)
}

// count is how many deliveries the receiver got after t with key.
func (rc *switchingReceiver) count(key string, after time.Time) int {
	n := 0
	for _, d := range rc.deliveries() {
		if d.key == key && d.at.After(after) {
			n++
		}
	}
	return n
}

// TestWebhookKeyRotation (issue 49: signing-key rotation under a steady
// flow of deliveries): events are published every 40 ms while the
// receiver verifies with the old key; the key is rotated (a generated one),
// the receiver goes on with the old key for a while, then switches to the
// new one; past the grace deliveries carry the new key's signature alone.
// The receiver rejects none, and the npm standardwebhooks and svix
// libraries verify every delivery with the key the receiver held, the
// grace's with either key, and refuse the old key after it.
func TestWebhookKeyRotation(t *testing.T) {
	s := hdctest.StartStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=50ms",
		"HDC_WEBHOOK_BACKOFF_BASE=50ms", "HDC_WEBHOOK_BACKOFF_MAX=250ms", "HDC_WEBHOOK_TIMEOUT=2s", "HDC_WEBHOOK_LEASE=3s",
		"HDC_WEBHOOK_KEY_GRACE="+rotationGrace.String())
	c := s.NewClient("rotation")
	tk := s.Login(c, false, "")
	const oldKey = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo="
	rc := newSwitchingReceiver(t, oldKey)
	reg := s.Send(c, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+rc.srv.URL+`/hook","event_names":["appointment.created"],"signing_key":"`+oldKey+`"}`), hdctest.Bearer(tk))
	if reg.Status != 200 {
		t.Fatalf("subscribe: %s", reg)
	}
	id, _ := reg.JSON(t)["id"].(string)

	// A steady flow of events until the test stops it.
	publisher := s.InternalClient(pki.Publisher)
	var published atomic.Int64
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(40 * time.Millisecond):
			}
			res, err := publisher.Post(s.Internal+contract.PathEvents, "application/json", strings.NewReader(
				fmt.Sprintf(`{"workspace_id":%q,"type":"appointment.created","data":{"n":%d}}`, c.Workspace, n)))
			if err != nil {
				t.Errorf("publish %d: %v", n, err)
				return
			}
			res.Body.Close()
			if res.StatusCode != http.StatusAccepted {
				t.Errorf("publish %d: %d", n, res.StatusCode)
				return
			}
			published.Add(1)
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-stopped
	}()
	start := time.Now()
	testkit.Eventually(t, time.Minute, "deliveries verified with the old key", func() bool { return rc.count(oldKey, start) >= 5 })

	sent := time.Now()
	// Encrypted, as a client keeping its new key from the network would,
	// and sent twice under one Idempotency-Key, as a client whose first
	// answer was lost would: the repeat gets the same key.
	h := hdctest.Bearer(tk)
	h["Idempotency-Key"] = "rotate-" + id
	r := s.Send(c, true, "POST", hdctest.SubsPath+"/"+id+"/signing-key", []byte(`{}`), h)
	var answer struct {
		SigningKey           string    `json:"signing_key"`
		PreviousKeyExpiresAt time.Time `json:"previous_key_expires_at"`
	}
	if r.Status != 200 || json.Unmarshal(r.Body, &answer) != nil || !strings.HasPrefix(answer.SigningKey, "whsec_") ||
		answer.PreviousKeyExpiresAt.Before(sent.Add(rotationGrace-time.Second)) {
		t.Fatalf("rotate: %s", r)
	}
	// The rotation is in force from its answer on, which a loaded machine
	// may give well after the request left: deliveries signed from then
	// on carry both keys' signatures.
	rotated := time.Now()
	if again := s.Send(c, true, "POST", hdctest.SubsPath+"/"+id+"/signing-key", []byte(`{}`), h); again.Status != 200 ||
		!strings.Contains(string(again.Body), answer.SigningKey) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the rotation repeated under its Idempotency-Key: %s", again)
	}
	newKey := answer.SigningKey
	testkit.Eventually(t, time.Minute, "deliveries after the rotation, the old key still used", func() bool {
		return rc.count(oldKey, rotated.Add(200*time.Millisecond)) >= 5
	})
	switched := time.Now()
	rc.use(newKey)
	testkit.Eventually(t, time.Minute, "deliveries verified with the new key past the grace", func() bool {
		return rc.count(newKey, answer.PreviousKeyExpiresAt.Add(2*time.Second)) >= 5
	})
	close(stop)
	<-stopped
	testkit.Eventually(t, time.Minute, "every event delivered", func() bool {
		return s.QueueDepth() == 0 && int64(countVerified(rc)) >= published.Load()
	})
	if n := rc.rejected.Load(); n != 0 {
		t.Fatalf("the receiver rejected %d deliveries across the switch", n)
	}
	t.Logf("%d events published; %d deliveries, the switch %v after the rotation", published.Load(), len(rc.deliveries()), switched.Sub(rotated))
	checkRotation(t, rc.deliveries(), oldKey, newKey, rotated, answer.PreviousKeyExpiresAt)
}

// countVerified counts the distinct webhook-ids the receiver got.
func countVerified(rc *switchingReceiver) int {
	ids := map[string]bool{}
	for _, d := range rc.deliveries() {
		ids[d.header.Get("webhook-id")] = true
	}
	return len(ids)
}

// rotationCheck is a delivery for webhook.mjs, and whether it must verify.
type rotationCheck struct {
	Key     string            `json:"key"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	want    bool
}

// checkRotation verifies the deliveries with the npm libraries: each with
// the key the receiver held; those signed in the grace with either key
// (and two signatures, the new key's first); those after it with the new
// key only.
func checkRotation(t *testing.T, ds []heldDelivery, oldKey, newKey string, rotated, graceEnd time.Time) {
	t.Helper()
	var checks []rotationCheck
	inGrace, after := 0, 0
	for _, d := range ds {
		h := map[string]string{}
		for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
			h[name] = d.header.Get(name)
		}
		checks = append(checks, rotationCheck{Key: d.key, Headers: h, Body: string(d.body), want: true})
		sigs := strings.Fields(h["webhook-signature"])
		var ts int64
		fmt.Sscan(h["webhook-timestamp"], &ts)
		signed := time.Unix(ts, 0)
		switch {
		case signed.After(rotated.Add(time.Second)) && signed.Before(graceEnd.Add(-time.Second)):
			inGrace++
			if len(sigs) != 2 {
				t.Fatalf("a delivery in the grace carries %q", h["webhook-signature"])
			}
			checks = append(checks, rotationCheck{Key: oldKey, Headers: h, Body: string(d.body), want: true},
				rotationCheck{Key: newKey, Headers: h, Body: string(d.body), want: true},
				rotationCheck{Key: newKey, Headers: map[string]string{"webhook-id": h["webhook-id"],
					"webhook-timestamp": h["webhook-timestamp"], "webhook-signature": sigs[0]}, Body: string(d.body), want: true})
		case !signed.Before(graceEnd.Add(time.Second)): // webhook-timestamp is in whole seconds
			after++
			if len(sigs) != 1 {
				t.Fatalf("a delivery after the grace carries %q", h["webhook-signature"])
			}
			checks = append(checks, rotationCheck{Key: oldKey, Headers: h, Body: string(d.body), want: false})
		}
	}
	if inGrace < 3 || after < 3 {
		t.Fatalf("%d deliveries in the grace and %d after it; want 3 or more of each", inGrace, after)
	}
	t.Logf("%d deliveries: %d signed in the grace, %d after it; %d checks for each npm library", len(ds), inGrace, after, len(checks))
	input, _ := json.Marshal(checks)
	for _, lib := range []string{"standardwebhooks", "svix"} {
		out, err := hdctest.Node(t, input, "webhook.mjs", "verify", lib)
		if err != nil {
			t.Fatal(err)
		}
		var results []struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(out, &results); err != nil || len(results) != len(checks) {
			t.Fatalf("node printed %s: %v", out, err)
		}
		for i, r := range results {
			if r.OK != checks[i].want {
				t.Fatalf("npm %s: check %d (%s) verifies %v, want %v: %s", lib, i, checks[i].Headers["webhook-signature"], r.OK, checks[i].want, r.Error)
			}
		}
	}
}
