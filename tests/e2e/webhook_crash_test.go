package e2e

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
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestWebhookCrashRecovery publishes 500 events to a subscriber, kills the
// backend with SIGKILL while deliveries are under way (some of them
// received by the subscriber but not yet answered, so never recorded as
// delivered), restarts it on the same data, and checks that every event
// reaches the subscriber, signed, and that a duplicate always carries the
// webhook-id (and the body) of the first copy.
func TestWebhookCrashRecovery(t *testing.T) {
	t.Parallel()
	const (
		events = 500
		key    = "crash-test-signing-key-0123456789"
	)
	dir := t.TempDir()
	client := hdctest.CreateWebhookClient(t, dir, "crash")
	rc := hdctest.NewWebhookReceiver(t, key, 10*time.Millisecond)
	b := hdctest.StartWebhookBackend(t, dir, hdctest.WebhookEnv...)
	b.Subscribe(client, `{"endpoint":"`+rc.Srv.URL+`/hook","signing_key":"`+key+`"}`)

	// Hold the first deliveries until every event is published, so the
	// kill comes with deliveries still to make.
	rc.Hold()
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
				status, answer := b.Post(b.Internal+contract.PathEvents,
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
	rc.Release()
	testkit.Eventually(t, 30*time.Second, "100 deliveries", func() bool { return len(rc.Deliveries()) >= 100 })
	rc.Hold()
	testkit.Eventually(t, 10*time.Second, "held requests", func() bool { return rc.InFlight.Load() > 0 })
	before, held := len(rc.Deliveries()), rc.InFlight.Load()
	if before >= events {
		t.Fatalf("all %d events were received before the kill", before)
	}
	b.Kill()
	killed := time.Now()
	rc.Release()

	b = hdctest.StartWebhookBackend(t, dir, hdctest.WebhookEnv...)
	distinct := func() int {
		seen := map[string]bool{}
		for _, d := range rc.Deliveries() {
			seen[d.Header.Get("webhook-id")] = true
		}
		return len(seen)
	}
	// The deliveries held at the kill stay leased to the dead process until
	// their leases expire; then they are made again.
	testkit.Eventually(t, 60*time.Second, "every delivery after the restart", func() bool {
		return distinct() >= events && b.QueueDepth() == 0
	})
	recovered := time.Since(killed)
	b.Stop()

	// Every event arrived, verified; copies of one event share its
	// webhook-id and body; different events have different ids.
	type copies struct {
		id   string
		body string
		n    int
	}
	byN := map[int]*copies{}
	ids := map[string]int{}
	for _, d := range rc.Deliveries() {
		if d.VerifyErr != nil {
			t.Fatalf("a delivery does not verify: %v", d.VerifyErr)
		}
		var p struct {
			Type string
			Data struct{ N *int }
		}
		if err := json.Unmarshal(d.Body, &p); err != nil || p.Data.N == nil {
			t.Fatalf("payload %s: %v", d.Body, err)
		}
		n, id := *p.Data.N, d.Header.Get("webhook-id")
		if p.Type != webhook.Events[n%len(webhook.Events)] {
			t.Fatalf("event %d delivered as %s", n, p.Type)
		}
		c := byN[n]
		if c == nil {
			if other, dup := ids[id]; dup {
				t.Fatalf("events %d and %d share webhook-id %s", other, n, id)
			}
			byN[n], ids[id] = &copies{id: id, body: string(d.Body), n: 1}, n
			continue
		}
		if id != c.id || string(d.Body) != c.body {
			t.Fatalf("event %d delivered twice with webhook-ids %s and %s (bodies equal: %v)", n, c.id, id, string(d.Body) == c.body)
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
		events, before, held, len(rc.Deliveries()), duplicates, recovered.Round(time.Millisecond))
}
