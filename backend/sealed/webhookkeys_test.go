package sealed

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
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

// TestFillSigningKeys: on either engine, two processes starting at once
// on a store with subscriptions an earlier version kept without a signing
// key give each one key between them, sealed for its place, which opens
// to a key one of them generated; a start after them gives none, and a
// subscription with a key keeps it.
func TestFillSigningKeys(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			st := plainStoreOf(t, e.open)
			ctx := t.Context()
			for _, id := range []string{"s2", "s3", "s4"} {
				must(t, st.CreateSubscription(ctx, store.Subscription{ID: id, WorkspaceID: "w1", Endpoint: "https://h.example/" + id,
					Protocol: "https", EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: now}, 0,
					audit.Event{At: now, Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: "w1"}))
			}
			k := testkit.Keeper(t)
			var filled [2]int
			var wg sync.WaitGroup
			for i := range filled {
				wg.Go(func() {
					s, err := Open(ctx, st, k, zap.NewNop())
					if err != nil {
						t.Error(err)
						return
					}
					var n atomic.Int64
					filled[i], err = s.FillSigningKeys(ctx, func() string { return fmt.Sprintf("whsec_generated-by-%d-%d", i, n.Add(1)) })
					if err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if filled[0]+filled[1] != 3 {
				t.Fatalf("the two starts gave %d and %d keys, want 3 between them", filled[0], filled[1])
			}
			s, err := Open(ctx, st, k, zap.NewNop())
			must(t, err)
			if n, err := s.FillSigningKeys(ctx, func() string { return "whsec_a-third-start" }); n != 0 || err != nil {
				t.Fatalf("a third start gave %d keys (%v)", n, err)
			}
			for _, id := range []string{"s1", "s2", "s3", "s4"} {
				raw, err := st.GetSubscription(ctx, "w1", id)
				must(t, err)
				opened := s.OpenKeys(raw)
				if !keeper.IsSealed(raw.SigningKey) || opened.SigningKeyErr != nil ||
					id != "s1" && !strings.HasPrefix(opened.SigningKey, "whsec_generated-by-") {
					t.Fatalf("%s: stored %q, opened %q (%v)", id, raw.SigningKey, opened.SigningKey, opened.SigningKeyErr)
				}
			}
		})
	}
}
