package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestWebhookCrashRecovery publishes 500 events to a subscriber, kills the
// backend with SIGKILL while deliveries are under way (some of them
// received by the subscriber but not yet answered, so never recorded as
// delivered), restarts it on the same data, and checks that every event
// reaches the subscriber, signed, and that a duplicate always carries the
// webhook-id (and the body) of the first copy.
func TestWebhookCrashRecovery(t *testing.T) {
	const (
		events = 500
		key    = "crash-test-signing-key-0123456789"
	)
	dir := t.TempDir()
	client := createWebhookClient(t, dir, "crash")
	rc := newWebhookReceiver(t, key, 10*time.Millisecond)
	b := startWebhookBackend(t, dir, webhookEnv...)
	b.subscribe(client, `{"endpoint":"`+rc.srv.URL+`/hook","signing_key":"`+key+`"}`)

	// Hold the first deliveries until every event is published, so the
	// kill comes with deliveries still to make.
	rc.hold()
	var (
		next      atomic.Int64
		wg        sync.WaitGroup
		failures  atomic.Int64
		published = make([]string, events) // event id by n
	)
	for range 4 {
		wg.Go(func() {
			for n := int(next.Add(1) - 1); n < events; n = int(next.Add(1) - 1) {
				typ := webhook.Events[n%len(webhook.Events)]
				status, answer := b.post(b.internal+contract.PathEvents,
					fmt.Sprintf(`{"type":%q,"workspace_id":"crash","data":{"n":%d}}`, typ, n))
				var pub webhook.Published
				if status != http.StatusAccepted || json.Unmarshal(answer, &pub) != nil || pub.Deliveries != 1 {
					failures.Add(1)
					t.Errorf("publish %d: %d %s", n, status, answer)
					return
				}
				published[n] = pub.ID
			}
		})
	}
	wg.Wait()
	if failures.Load() > 0 {
		t.FailNow()
	}

	// Let deliveries flow, then hold them again and kill the backend while
	// the subscriber holds requests it has received but not answered.
	rc.release()
	testkit.Eventually(t, 30*time.Second, "100 deliveries", func() bool { return len(rc.deliveries()) >= 100 })
	rc.hold()
	testkit.Eventually(t, 10*time.Second, "held requests", func() bool { return rc.inFlight.Load() > 0 })
	before, held := len(rc.deliveries()), rc.inFlight.Load()
	if before >= events {
		t.Fatalf("all %d events were received before the kill", before)
	}
	b.kill()
	killed := time.Now()
	rc.release()

	b = startWebhookBackend(t, dir, webhookEnv...)
	distinct := func() int {
		seen := map[string]bool{}
		for _, d := range rc.deliveries() {
			seen[d.header.Get("webhook-id")] = true
		}
		return len(seen)
	}
	// The deliveries held at the kill stay leased to the dead process until
	// their leases expire; then they are made again.
	testkit.Eventually(t, 60*time.Second, "every delivery after the restart", func() bool {
		return distinct() >= events && b.queueDepth() == 0
	})
	recovered := time.Since(killed)
	b.stop()

	// Every event arrived, verified; copies of one event share its
	// webhook-id and body; different events have different ids.
	type copies struct {
		id   string
		body string
		n    int
	}
	byN := map[int]*copies{}
	ids := map[string]int{}
	for _, d := range rc.deliveries() {
		if d.verifyErr != nil {
			t.Fatalf("a delivery does not verify: %v", d.verifyErr)
		}
		var p struct {
			Type string
			Data struct{ N *int }
		}
		if err := json.Unmarshal(d.body, &p); err != nil || p.Data.N == nil {
			t.Fatalf("payload %s: %v", d.body, err)
		}
		n, id := *p.Data.N, d.header.Get("webhook-id")
		if p.Type != webhook.Events[n%len(webhook.Events)] {
			t.Fatalf("event %d delivered as %s", n, p.Type)
		}
		c := byN[n]
		if c == nil {
			if other, dup := ids[id]; dup {
				t.Fatalf("events %d and %d share webhook-id %s", other, n, id)
			}
			byN[n], ids[id] = &copies{id: id, body: string(d.body), n: 1}, n
			continue
		}
		if id != c.id || string(d.body) != c.body {
			t.Fatalf("event %d delivered twice with webhook-ids %s and %s (bodies equal: %v)", n, c.id, id, string(d.body) == c.body)
		}
		c.n++
	}
	duplicates := 0
	for n := range events {
		c := byN[n]
		if c == nil {
			t.Fatalf("event %d (%s) never arrived", n, published[n])
		}
		duplicates += c.n - 1
	}
	// The requests held at the kill were never answered: the restarted
	// backend had to deliver them again.
	if duplicates < int(held) {
		t.Fatalf("%d duplicates, fewer than the %d requests held at the kill", duplicates, held)
	}
	t.Logf("%d events; %d received before the SIGKILL with %d requests in flight; %d deliveries in all, %d duplicates, each with its event's webhook-id; all delivered %v after the kill",
		events, before, held, len(rc.deliveries()), duplicates, recovered.Round(time.Millisecond))
}
