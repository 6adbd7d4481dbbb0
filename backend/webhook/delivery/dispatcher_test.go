package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.uber.org/zap/zaptest"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/backend/store/storetest"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// loopback lets tests deliver to their own receivers.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// harness runs a Dispatcher on a fresh SQLite store with workspace w1 and a
// compressed schedule.
type harness struct {
	t     *testing.T
	store storetest.Store
	d     *Dispatcher
	reg   *prometheus.Registry
	// stop stops the dispatcher and waits for it.
	stop func()
}

func start(t *testing.T, mutate func(*Config)) *harness {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureWorkspace(t.Context(), "w1", time.Now()); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := Config{
		Store:          st,
		Workers:        4,
		PerWorkspace:   2,
		PollInterval:   20 * time.Millisecond,
		Timeout:        2 * time.Second,
		ConnectTimeout: time.Second,
		Lease:          5 * time.Second,
		Schedule:       Schedule{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond, Horizon: time.Minute},
		Guard:          webhook.NewGuard(webhook.GuardConfig{Allow: loopback}),
		Log:            zaptest.NewLogger(t),
		Metrics:        reg,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		d.Run(ctx)
		close(done)
	}()
	stop := sync.OnceFunc(func() {
		cancel()
		<-done
	})
	t.Cleanup(func() {
		stop()
		st.Close()
	})
	return &harness{t: t, store: st, d: d, reg: reg, stop: stop}
}

// subscribe subscribes w1 to every event at endpoint and returns the
// subscription id.
func (h *harness) subscribe(endpoint, protocol, key string) string {
	h.t.Helper()
	return h.subscribeIn("w1", endpoint, protocol, key)
}

// subscribeIn subscribes workspace ws to every event at endpoint.
func (h *harness) subscribeIn(ws, endpoint, protocol, key string) string {
	h.t.Helper()
	if _, err := h.store.EnsureWorkspace(h.t.Context(), ws, time.Now()); err != nil {
		h.t.Fatal(err)
	}
	id := uuid.NewString()
	err := h.store.CreateSubscription(h.t.Context(), store.Subscription{
		ID: id, WorkspaceID: ws, Endpoint: endpoint, Protocol: protocol, EventNames: webhook.Events,
		SigningKey: key, Status: store.SubscriptionActive, CreatedAt: time.Now(),
	}, 0, audit.Event{At: time.Now(), Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: ws,
		Entity: audit.Entity{Kind: audit.EntitySubscription, ID: id}})
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

// publish publishes an event in w1 and returns its delivery ids.
func (h *harness) publish(typ, data string) []string {
	h.t.Helper()
	return h.publishIn("w1", typ, data)
}

// publishIn publishes an event in workspace ws.
func (h *harness) publishIn(ws, typ, data string) []string {
	h.t.Helper()
	ids, err := h.store.PublishEvent(h.t.Context(), store.Event{
		ID: uuid.NewString(), WorkspaceID: ws, Type: typ, Data: []byte(data), CreatedAt: time.Now(),
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.d.Notify()
	return ids
}

// finished waits until delivery id is no longer pending and returns it
// with its attempts.
func (h *harness) finished(id string) (store.Delivery, []store.Attempt) {
	h.t.Helper()
	return h.waitFor(id, func(d store.Delivery) bool { return d.Status != store.DeliveryPending })
}

// attempted waits until delivery id had an attempt.
func (h *harness) attempted(id string) (store.Delivery, []store.Attempt) {
	h.t.Helper()
	return h.waitFor(id, func(d store.Delivery) bool { return d.Attempts > 0 })
}

// waitFor waits until delivery id satisfies ok and returns it with its
// attempts.
func (h *harness) waitFor(id string, ok func(store.Delivery) bool) (store.Delivery, []store.Attempt) {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := h.store.GetDelivery(h.t.Context(), id)
		if err != nil {
			h.t.Fatal(err)
		}
		if ok(d) {
			attempts, err := h.store.ListAttempts(h.t.Context(), id)
			if err != nil {
				h.t.Fatal(err)
			}
			return d, attempts
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("delivery %s: still %s after %d attempts", id, d.Status, d.Attempts)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func outcomes(attempts []store.Attempt) []string {
	var out []string
	for _, a := range attempts {
		out = append(out, a.Outcome)
	}
	return out
}

// request is what a receiver got.
type request struct {
	at     time.Time
	path   string
	header http.Header
	body   []byte
}

// receiver answers the n-th request (from 0) with answer(n, w, r) and
// records every request.
type receiver struct {
	mu       sync.Mutex
	requests []request
	srv      *httptest.Server
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.requests)
		rc.requests = append(rc.requests, request{at: time.Now(), path: r.URL.Path, header: r.Header.Clone(), body: body})
		rc.mu.Unlock()
		answer(n, w, r)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) got() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.requests)
}

func status(code int) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// TestDeliverSigned: a receiver verifies every delivery with the Standard
// Webhooks Go library; each delivery has its own webhook-id.
func TestDeliverSigned(t *testing.T) {
	const key = "whk-0123456789abcdef-ü"
	h := start(t, nil)
	wh, err := standardwebhooks.NewWebhookRaw([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	signed := newReceiver(t, status(http.StatusNoContent))
	unsigned := newReceiver(t, status(http.StatusOK))
	signedID := h.subscribe(signed.srv.URL+"/hook?tenant=w1", webhook.ProtocolHTTP, key)
	h.subscribe(unsigned.srv.URL, webhook.ProtocolHTTP, "")

	events := map[string]string{
		"appointment.created": `{"appointment_id":"a-1"}`,
		"receipt.updated":     `{"receipt_id":"r-1","lines":[{"amount":12.5}]}`,
		"user.delete":         `{}`,
	}
	var ids []string
	for typ, data := range events {
		got := h.publish(typ, data)
		if len(got) != 2 {
			t.Fatalf("%s: %d deliveries, want 2", typ, len(got))
		}
		ids = append(ids, got...)
	}
	for _, id := range ids {
		if d, attempts := h.finished(id); d.Status != store.DeliveryDelivered || len(attempts) != 1 || attempts[0].StatusCode/100 != 2 {
			t.Fatalf("delivery %s: %+v, attempts %+v", id, d, attempts)
		}
	}

	seen, verified := map[string]bool{}, 0
	for _, r := range signed.got() {
		if err := wh.Verify(r.body, r.header); err != nil {
			t.Fatalf("the Standard Webhooks library rejects a delivery: %v", err)
		}
		verified++
		var p Payload
		if err := json.Unmarshal(r.body, &p); err != nil || events[p.Type] == "" || time.Since(p.Timestamp) > time.Minute {
			t.Fatalf("payload %s: %v", r.body, err)
		}
		if string(p.Data) != events[p.Type] || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("payload data %s, want %s", p.Data, events[p.Type])
		}
		seen[r.header.Get("webhook-id")] = true
	}
	for _, r := range unsigned.got() {
		if r.header.Get("webhook-signature") != "" || r.header.Get("webhook-id") == "" || r.header.Get("webhook-timestamp") == "" {
			t.Fatalf("unsigned delivery headers: %v", r.header)
		}
		seen[r.header.Get("webhook-id")] = true
	}
	if verified != 3 || len(seen) != 6 {
		t.Fatalf("%d verified deliveries, %d distinct webhook-ids; want 3 and 6", verified, len(seen))
	}
	sub, err := h.store.GetSubscription(t.Context(), "w1", signedID)
	if err != nil || sub.LastDeliveryOutcome != OutcomeDelivered || time.Since(sub.LastDeliveryAt) > time.Minute {
		t.Fatalf("subscription after delivery: %+v %v", sub, err)
	}
	// A worker counts its delivery once the store has it finished, so the
	// count may trail the deliveries seen above by a moment.
	delivered := h.d.metrics.deliveries.WithLabelValues("http", "delivered")
	testkit.WaitFor(10*time.Second, func() bool { return testutil.ToFloat64(delivered) >= 6 })
	if got := testutil.ToFloat64(delivered); got != 6 {
		t.Fatalf("delivered metric = %v, want 6", got)
	}
}

// TestRetries runs the retry behaviour on a compressed schedule.
func TestRetries(t *testing.T) {
	const key = "retry-key-0123456789"
	wh, _ := standardwebhooks.NewWebhookRaw([]byte(key))

	// sameMessage checks that every request of a delivery carries one
	// webhook-id and one body, each attempt signed afresh.
	sameMessage := func(t *testing.T, reqs []request) {
		t.Helper()
		for _, r := range reqs {
			if err := wh.Verify(r.body, r.header); err != nil {
				t.Fatalf("attempt not verifiable: %v", err)
			}
			if r.header.Get("webhook-id") != reqs[0].header.Get("webhook-id") || string(r.body) != string(reqs[0].body) {
				t.Fatalf("a retry changed the webhook-id or the body")
			}
		}
	}

	t.Run("500 then 200", func(t *testing.T) {
		h := start(t, nil)
		rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(map[bool]int{true: 500, false: 200}[n == 0])
		})
		h.subscribe(rc.srv.URL, webhook.ProtocolHTTP, key)
		d, attempts := h.finished(h.publish("receipt.created", `{"n":1}`)[0])
		if d.Status != store.DeliveryDelivered || !slices.Equal(outcomes(attempts), []string{"http_500", "delivered"}) {
			t.Fatalf("delivery %+v, attempts %q", d, outcomes(attempts))
		}
		sameMessage(t, rc.got())
		if got := testutil.ToFloat64(h.d.metrics.retries.WithLabelValues("http")); got != 1 {
			t.Fatalf("retries metric = %v, want 1", got)
		}
	})

	t.Run("429 with Retry-After", func(t *testing.T) {
		h := start(t, func(c *Config) { c.Schedule.Max = 5 * time.Second })
		rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 0 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.WriteHeader(http.StatusOK)
		})
		h.subscribe(rc.srv.URL, webhook.ProtocolHTTP, key)
		d, attempts := h.finished(h.publish("receipt.created", `{"n":2}`)[0])
		if d.Status != store.DeliveryDelivered || !slices.Equal(outcomes(attempts), []string{"http_429", "delivered"}) {
			t.Fatalf("delivery %+v, attempts %q", d, outcomes(attempts))
		}
		reqs := rc.got()
		sameMessage(t, reqs)
		// Retry-After: 1 outweighs the 20 ms backoff: the retry cannot come sooner.
		if gap := reqs[1].at.Sub(reqs[0].at); gap < time.Second {
			t.Fatalf("retried %v after a Retry-After of 1 s", gap)
		}
	})

	t.Run("timeout then 200", func(t *testing.T) {
		h := start(t, func(c *Config) { c.Timeout = 200 * time.Millisecond })
		rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 0 {
				select { // hang until the dispatcher gives up on the request
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
				return
			}
			w.WriteHeader(http.StatusAccepted)
		})
		h.subscribe(rc.srv.URL, webhook.ProtocolHTTP, key)
		d, attempts := h.finished(h.publish("prescription.created", `{"n":3}`)[0])
		if d.Status != store.DeliveryDelivered || !slices.Equal(outcomes(attempts), []string{OutcomeTimeout, "delivered"}) {
			t.Fatalf("delivery %+v, attempts %q", d, outcomes(attempts))
		}
		if attempts[0].StatusCode != 0 {
			t.Fatalf("a timed-out attempt has status %d", attempts[0].StatusCode)
		}
		sameMessage(t, rc.got())
	})

	t.Run("410 disables the subscription", func(t *testing.T) {
		h := start(t, func(c *Config) { c.Workers = 1 })
		// The receiver holds the first attempt until both events are
		// published: otherwise its 410 may disable the subscription first.
		published := make(chan struct{})
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			select {
			case <-published:
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusGone)
		})
		subID := h.subscribe(rc.srv.URL, webhook.ProtocolHTTP, "")
		first := h.publish("user.delete", `{"user":"u1"}`)[0]
		second := h.publish("user.delete", `{"user":"u2"}`)[0]
		close(published)
		if d, attempts := h.finished(first); d.Status != store.DeliveryFailed || !slices.Equal(outcomes(attempts), []string{"http_410"}) {
			t.Fatalf("first delivery %+v, attempts %q", d, outcomes(attempts))
		}
		// The other delivery is kept, pending and unclaimed (one worker:
		// it was not claimed before the 410).
		if d, err := h.store.GetDelivery(t.Context(), second); err != nil || d.Status != store.DeliveryPending || d.Attempts != 0 {
			t.Fatalf("second delivery %+v %v", d, err)
		}
		sub, err := h.store.GetSubscription(t.Context(), "w1", subID)
		if err != nil || sub.Status != store.SubscriptionDisabled || sub.LastDeliveryOutcome != "http_410" {
			t.Fatalf("subscription after 410: %+v %v", sub, err)
		}
		// Recorded in w1's trail, as the backend's own act.
		rs, err := h.store.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1", Entity: subID})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 2 || rs[1].Action != audit.DeliveryDisabled || rs[1].Outcome != audit.Success || rs[1].Client != "" ||
			rs[1].Entity != (audit.Entity{Kind: audit.EntitySubscription, ID: subID}) {
			t.Fatalf("trail of the subscription = %+v", rs)
		}
		if ids := h.publish("user.delete", `{"user":"u3"}`); len(ids) != 0 {
			t.Fatalf("a disabled subscription got %d new deliveries", len(ids))
		}
		if got := testutil.ToFloat64(h.d.metrics.deliveries.WithLabelValues("http", "disabled")); got != 1 {
			t.Fatalf("disabled metric = %v, want 1", got)
		}
		if got := testutil.ToFloat64(h.d.metrics.disabled.WithLabelValues(store.DisabledGone)); got != 1 || rs[1].Reason != store.DisabledGone {
			t.Fatalf("subscriptions disabled (gone) = %v, reason %q", got, rs[1].Reason)
		}
	})

	t.Run("give up after the horizon", func(t *testing.T) {
		const horizon = time.Second // room for 3 attempts at 20–50 ms apart on a loaded machine
		h := start(t, func(c *Config) {
			c.Schedule = Schedule{Base: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: horizon}
		})
		rc := newReceiver(t, status(http.StatusServiceUnavailable))
		h.subscribe(rc.srv.URL, webhook.ProtocolHTTP, key)
		d, attempts := h.finished(h.publish("appointment.updated", `{"n":4}`)[0])
		if d.Status != store.DeliveryFailed || len(attempts) < 3 {
			t.Fatalf("delivery %+v after %d attempts", d, len(attempts))
		}
		for _, a := range attempts {
			if a.Outcome != "http_503" {
				t.Fatalf("attempts %q", outcomes(attempts))
			}
		}
		// Failing before the horizon schedules a retry, so the attempt that
		// gave up started at the horizon or later.
		if last := attempts[len(attempts)-1]; last.StartedAt.Before(d.CreatedAt.Add(horizon)) {
			t.Fatalf("gave up at %v, before the horizon %v", last.StartedAt, d.CreatedAt.Add(horizon))
		}
		sameMessage(t, rc.got())
		if len(rc.got()) != len(attempts) {
			t.Fatalf("%d requests for %d attempts", len(rc.got()), len(attempts))
		}
		m := h.d.metrics
		if failed, retries, fives := testutil.ToFloat64(m.deliveries.WithLabelValues("http", "failed")),
			testutil.ToFloat64(m.retries.WithLabelValues("http")),
			testutil.ToFloat64(m.attempts.WithLabelValues("http", "http_5xx")); failed != 1 || retries != float64(len(attempts)-1) || fives != float64(len(attempts)) {
			t.Fatalf("metrics: failed %v, retries %v, 5xx attempts %v for %d attempts", failed, retries, fives, len(attempts))
		}
	})
}

// TestRefusedAddress: with no allow-list a loopback endpoint is refused at
// delivery, never connected to, and the subscriber sees why.
func TestRefusedAddress(t *testing.T) {
	h := start(t, func(c *Config) { c.Guard = nil })
	rc := newReceiver(t, status(http.StatusOK))
	subID := h.subscribe(rc.srv.URL, webhook.ProtocolHTTP, "")
	d, attempts := h.finished(h.publish("receipt.created", `{}`)[0])
	if d.Status != store.DeliveryFailed || !slices.Equal(outcomes(attempts), []string{OutcomeAddressRefused}) || len(rc.got()) != 0 {
		t.Fatalf("delivery %+v, attempts %q, %d requests received", d, outcomes(attempts), len(rc.got()))
	}
	if sub, _ := h.store.GetSubscription(t.Context(), "w1", subID); sub.LastDeliveryOutcome != OutcomeAddressRefused || sub.Status != store.SubscriptionActive {
		t.Fatalf("subscription %+v", sub)
	}
}

// TestShutdownReleases: stopping mid-attempt releases the lease without
// counting the attempt, so the next process resumes at once.
func TestShutdownReleases(t *testing.T) {
	h := start(t, nil)
	arrived := make(chan struct{}, 1)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	h.subscribe(rc.srv.URL, webhook.ProtocolHTTP, "")
	id := h.publish("receipt.created", `{}`)[0]
	<-arrived
	h.stop()
	d, err := h.store.GetDelivery(t.Context(), id)
	if err != nil || d.Status != store.DeliveryPending || d.Attempts != 0 || d.LeaseOwner != "" {
		t.Fatalf("after shutdown: %+v %v", d, err)
	}
}

// TestQueueMetrics: the depth and age of the outbox are scraped from the
// store.
func TestQueueMetrics(t *testing.T) {
	h := start(t, func(c *Config) { c.Schedule.Base, c.Schedule.Max = time.Hour, time.Hour })
	rc := newReceiver(t, status(http.StatusInternalServerError))
	h.subscribe(rc.srv.URL, webhook.ProtocolHTTP, "")
	h.attempted(h.publish("receipt.created", `{}`)[0])
	gauge := func(name string) float64 {
		families, err := h.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() == name {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("no metric %s", name)
		return 0
	}
	if depth, age := gauge("hdc_backend_webhook_queue_depth"), gauge("hdc_backend_webhook_oldest_pending_age_seconds"); depth != 1 || age <= 0 {
		t.Fatalf("queue depth %v, oldest age %v; want 1 and > 0", depth, age)
	}
}

// TestSlowWorkspaceLeavesWorkers: subscribers of one workspace that never
// answer hold at most PerWorkspace workers; another workspace's delivery
// goes out meanwhile, long before their attempts time out.
func TestSlowWorkspaceLeavesWorkers(t *testing.T) {
	var mu sync.Mutex
	hanging, most := 0, 0
	release := make(chan struct{})
	slow := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hanging++
		most = max(most, hanging)
		mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		mu.Lock()
		hanging--
		mu.Unlock()
	})
	defer close(release) // before the receiver closes: it waits for its handlers
	h := start(t, func(c *Config) { c.Timeout, c.Lease = time.Minute, 2*time.Minute })
	for i := range 10 {
		h.subscribeIn("slow", slow.srv.URL+"/"+strconv.Itoa(i), webhook.ProtocolHTTP, "key-0123456789abcdef")
	}
	h.publishIn("slow", "receipt.created", `{"n":1}`)
	testkit.Eventually(t, 10*time.Second, "two attempts of the slow workspace hanging", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return hanging == 2
	})
	if got := testutil.ToFloat64(h.d.metrics.inFlight); got != 2 {
		t.Fatalf("attempts in flight: the gauge says %v, want 2", got)
	}
	fast := newReceiver(t, status(http.StatusNoContent))
	h.subscribeIn("other", fast.srv.URL, webhook.ProtocolHTTP, "key-0123456789abcdef")
	ids := h.publishIn("other", "receipt.created", `{"n":2}`)
	d, _ := h.finished(ids[0])
	if d.Status != store.DeliveryDelivered {
		t.Fatalf("the other workspace's delivery: %s", d.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 2 {
		t.Fatalf("the slow workspace held %d workers at once, want its cap of 2", most)
	}
}

// keyUnopened is a store whose deliveries' signing keys do not open, as
// package sealed claims them when a stored key was altered.
type keyUnopened struct{ store.Outbox }

func (s keyUnopened) ClaimDeliveries(ctx context.Context, c store.Claim) ([]store.Delivery, error) {
	ds, err := s.Outbox.ClaimDeliveries(ctx, c)
	for i := range ds {
		ds[i].Subscription.SigningKey, ds[i].Subscription.SigningKeyErr = "", errors.New("the sealed value does not open")
	}
	return ds, err
}

// TestDeliveryOfAKeyThatDoesNotOpen: a delivery whose subscription's
// signing key does not open is given up at its first attempt, recorded as
// signing_key_unavailable, and never sent, signed or not.
func TestDeliveryOfAKeyThatDoesNotOpen(t *testing.T) {
	rc := newReceiver(t, func(int, http.ResponseWriter, *http.Request) { t.Error("the subscriber was called") })
	h := start(t, func(c *Config) { c.Store = keyUnopened{c.Store} })
	h.subscribe(rc.srv.URL+"/hook", webhook.ProtocolHTTP, "whsec_dGhlIGtleSB0aGF0IGRvZXMgbm90IG9wZW4=")
	for _, id := range h.publish("appointment.created", `{"appointment_id":"a-9"}`) {
		d, attempts := h.finished(id)
		if d.Status != store.DeliveryFailed || !slices.Equal(outcomes(attempts), []string{OutcomeSigningKeyUnavailable}) {
			t.Fatalf("%+v, attempts %q", d, outcomes(attempts))
		}
	}
}
