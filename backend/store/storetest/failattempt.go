package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/store"
)

// FailAttempt has the one subscription of workspace ws fail an attempt at
// an event published at at: its last attempt failed, a retry is scheduled
// an hour later. A test whose server runs its own delivery dispatcher
// passes an at ahead of now, which that dispatcher does not claim.
func FailAttempt(t testing.TB, st store.Store, ws string, at time.Time) {
	t.Helper()
	e := store.Event{ID: uuid.NewString(), WorkspaceID: ws, Type: "user.delete", Data: []byte(`{}`), CreatedAt: at}
	if _, err := st.PublishEvent(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	ds, err := st.ClaimDeliveries(t.Context(), store.Claim{Owner: "test", Now: at.Add(time.Second), LeaseUntil: at.Add(time.Minute), Limit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("claimed %d, %v", len(ds), err)
	}
	a := store.Attempt{DeliveryID: ds[0].ID, StartedAt: at, Duration: time.Second, Outcome: "http_503", StatusCode: 503}
	if err := st.FinishAttempt(t.Context(), "test", a, store.Next{Status: store.DeliveryPending, RetryAt: at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}
