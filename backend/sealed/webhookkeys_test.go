package sealed

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestRotatedKeysSealed: a rotation stores the new key sealed and keeps
// the replaced one sealed as the previous key; both open in a claimed
// delivery and with OpenKeys, and neither is in the store in the clear.
func TestRotatedKeysSealed(t *testing.T) {
	st := plainStore(t)
	s, err := Open(t.Context(), st, testkit.Keeper(t), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const next = "whsec_the-rotated-subscription-key"
	until := now.Add(24 * time.Hour)
	must(t, s.RotateSigningKey(ctx, "w1", "s1", store.SigningKeyChange{Key: next, PreviousUntil: until,
		Event: audit.Event{At: now, Action: audit.SigningKeyRotate, Outcome: audit.Success, Workspace: "w1"}}))
	raw, err := st.GetSubscription(ctx, "w1", "s1")
	must(t, err)
	for _, v := range []string{raw.SigningKey, raw.PreviousSigningKey} {
		if !keeper.IsSealed(v) || strings.Contains(v, "subscription-key") {
			t.Fatalf("a key is stored in the clear: %q", v)
		}
	}
	opened := s.OpenKeys(raw)
	if opened.SigningKey != next || opened.PreviousSigningKey != "whsec_plain-subscription-key" ||
		!opened.PreviousKeyExpiresAt.Equal(until) || opened.SigningKeyErr != nil {
		t.Fatalf("opened %+v", opened)
	}
	_, err = s.PublishEvent(ctx, store.Event{ID: "e1", WorkspaceID: "w1", Type: "user.delete", Data: []byte(`{}`), CreatedAt: now})
	must(t, err)
	ds, err := s.ClaimDeliveries(ctx, store.Claim{Owner: "o1", Now: now.Add(time.Second), LeaseUntil: now.Add(time.Minute), Limit: 10})
	must(t, err)
	if len(ds) != 1 || ds[0].Subscription.SigningKey != next || ds[0].Subscription.PreviousSigningKey != "whsec_plain-subscription-key" {
		t.Fatalf("claimed %+v", ds)
	}
}
