package sealed

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// BenchmarkOpen is a backend's start with the keeper, on a store of 10
// signing keys and 10,000 subscriptions with webhook signing keys, all
// sealed: what sealing adds to a start (the data key unwrapped, the
// secrets checked for plain ones) and the keeper's calls per start. The
// baseline is opening the store alone.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "hdc.db")
	st, err := sqlite.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	k := testkit.Keeper(b)
	s, err := Open(b.Context(), st, k, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	seedStore(b, s)
	st.Close()
	b.Run("store alone", func(b *testing.B) {
		for b.Loop() {
			st, err := sqlite.Open(b.Context(), path)
			if err != nil {
				b.Fatal(err)
			}
			st.Close()
		}
	})
	b.Run("sealed", func(b *testing.B) {
		calls := k.Calls()
		for b.Loop() {
			st, err := sqlite.Open(b.Context(), path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Open(b.Context(), st, k, zap.NewNop()); err != nil {
				b.Fatal(err)
			}
			st.Close()
		}
		b.ReportMetric(float64(k.Calls()-calls)/float64(b.N), "keeper-calls/op")
	})
}

// seedStore gives s 10 signing keys and 10,000 subscriptions with
// signing keys, sealed.
func seedStore(b *testing.B, s *Store) {
	ctx, now := b.Context(), time.Now()
	if _, err := s.EnsureWorkspace(ctx, "w1", now); err != nil {
		b.Fatal(err)
	}
	for i := range 10 {
		if err := s.AddSigningKey(ctx, store.SigningKey{ID: fmt.Sprint("k", i), Generation: int64(i + 1), Seed: bytes.Repeat([]byte{byte(i)}, 32), CreatedAt: now}); err != nil {
			b.Fatal(err)
		}
	}
	e := audit.Event{At: now, Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: "w1",
		Entity: audit.Entity{Kind: audit.EntitySubscription, ID: "12345678-1234-4234-8234-123456789abc"}}
	for i := range 10_000 {
		sub := store.Subscription{ID: fmt.Sprint("s", i), WorkspaceID: "w1", Endpoint: fmt.Sprint("https://h.example/", i),
			Protocol: "https", SigningKey: "whsec_dGhlIGJlbmNoJ3Mgd2ViaG9vayBrZXk=", Status: store.SubscriptionActive, CreatedAt: now}
		if err := s.CreateSubscription(ctx, sub, 0, e); err != nil {
			b.Fatal(err)
		}
	}
}
