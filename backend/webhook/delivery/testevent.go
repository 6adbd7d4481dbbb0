package delivery

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// TestEventType is the type of the event SendTest sends.
const TestEventType = "webhook.test"

// SendTest implements webhook.Tester: it sends sub (its signing keys
// opened) a webhook.test event now, through the sender, SSRF guard,
// signatures and timeout of a real attempt, with a webhook-id of its own.
// Nothing is written to the outbox: a test event is not retried and
// leaves no delivery.
func (d *Dispatcher) SendTest(ctx context.Context, sub store.Subscription) webhook.TestResult {
	start := d.now()
	data, _ := json.Marshal(map[string]string{"subscription_id": sub.ID}) // cannot fail
	// A published event's time is what the store kept of it, a whole
	// microsecond: the test event's timestamp has that precision too.
	published := start.UTC().Truncate(time.Microsecond)
	dl := store.Delivery{
		ID:           uuid.NewString(),
		Event:        store.Event{ID: uuid.NewString(), WorkspaceID: sub.WorkspaceID, Type: TestEventType, Data: data, CreatedAt: published},
		Subscription: sub,
		Status:       store.DeliveryPending,
		CreatedAt:    start,
	}
	r := d.send(ctx, dl, start)
	elapsed := d.now().Sub(start)
	telemetry.Logger(ctx, d.cfg.Log).Info("webhook test event sent", append(attemptFields(r, elapsed),
		zap.String("workspace_id", sub.WorkspaceID), zap.String("subscription_id", sub.ID),
		zap.String("protocol", sub.Protocol))...)
	return webhook.TestResult{EventID: MessageID(dl.ID), Outcome: r.Outcome, Status: r.StatusCode, Duration: elapsed}
}
