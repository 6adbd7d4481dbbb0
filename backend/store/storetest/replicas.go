package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// RunReplicas runs the tests of coordination between processes: open
// returns two stores on one fresh database, as two replicas have, and
// arranges their cleanup.
func RunReplicas(t *testing.T, open func(t *testing.T) (a, b Store)) {
	tests := []struct {
		name string
		fn   func(t *testing.T, a, b Store)
	}{
		{"Claims", testReplicaClaims},
		{"RefreshReuse", testReplicaRefreshReuse},
		{"SigningKeyRotation", testReplicaSigningKeys},
		{"Throttle", testReplicaThrottle},
		{"Audit", testReplicaAudit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := open(t)
			tt.fn(t, a, b)
		})
	}
}

// testReplicaClaims drains an outbox with workers on both replicas and
// checks that each delivery was claimed exactly once.
func testReplicaClaims(t *testing.T, a, b Store) {
	seed(t, a, "w1", "c1")
	subscribe(t, a, "s1", "w1", "receipt.created")
	subscribe(t, b, "s2", "w1", "receipt.created")
	var want []string
	for i := range 30 {
		want = append(want, publish(t, a, fmt.Sprint("e", i), "w1", "receipt.created", at(0))...)
	}
	var (
		mu  sync.Mutex
		got []string
		wg  sync.WaitGroup
	)
	for i := range 6 {
		s := []Store{a, b}[i%2]
		wg.Go(func() {
			for n := 0; ; n++ {
				ds, err := s.ClaimDeliveries(ctx(t), store.Claim{Owner: fmt.Sprintf("r%d-%d", i, n), Now: at(time.Second), LeaseUntil: at(time.Minute), Limit: 2})
				if err != nil {
					t.Error(err)
					return
				}
				if len(ds) == 0 {
					return
				}
				mu.Lock()
				got = append(got, deliveryIDs(ds)...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if slices.Sort(got); !slices.Equal(got, sorted(want)) {
		t.Fatalf("the replicas claimed %d deliveries (%d distinct), want each of the %d exactly once",
			len(got), len(slices.Compact(slices.Clone(got))), len(want))
	}
}

// testReplicaRefreshReuse rotates a token on one replica and presents the
// rotated one to the other, which must see the reuse; then both race to
// rotate one token, and one wins.
func testReplicaRefreshReuse(t *testing.T, a, b Store) {
	seed(t, a, "w1", "c1")
	must(t, a.CreateRefreshFamily(ctx(t), family("f1", "c1", "w1"), token(1, at(0)), ev(audit.Login)))
	_, err := a.RotateRefreshToken(ctx(t), "c1", hash(1), token(2, at(time.Minute)), at(time.Minute), ev(audit.Refresh))
	must(t, err)
	_, err = b.RotateRefreshToken(ctx(t), "c1", hash(1), token(3, at(2*time.Minute)), at(2*time.Minute), ev(audit.Refresh))
	wantErr(t, err, store.ErrTokenReused)
	_, err = a.RotateRefreshToken(ctx(t), "c1", hash(2), token(4, at(3*time.Minute)), at(3*time.Minute), ev(audit.Refresh))
	wantErr(t, err, store.ErrNotFound)

	must(t, a.CreateRefreshFamily(ctx(t), family("f2", "c1", "w1"), token(10, at(0)), ev(audit.Login)))
	if ok, errs := rotateAtOnce(t, []Store{a, b}, hash(10), 8); ok != 1 {
		t.Fatalf("%d rotations of one token on two replicas succeeded, want exactly 1 (errors %v)", ok, errs)
	}
}

// testReplicaSigningKeys has both replicas rotate at once: one key is
// added, and both see it.
func testReplicaSigningKeys(t *testing.T, a, b Store) {
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, s := range []Store{a, b} {
		wg.Go(func() {
			errs[i] = s.AddSigningKey(ctx(t), store.SigningKey{
				ID: fmt.Sprint("k", i), Generation: 1, Seed: hash(byte(i))[:32], CreatedAt: at(0),
			})
		})
	}
	wg.Wait()
	var added int
	for _, err := range errs {
		switch {
		case err == nil:
			added++
		case !errors.Is(err, store.ErrConflict):
			t.Fatal(err)
		}
	}
	ka, err := a.ListSigningKeys(ctx(t))
	must(t, err)
	kb, err := b.ListSigningKeys(ctx(t))
	must(t, err)
	if added != 1 || len(ka) != 1 || len(kb) != 1 || ka[0].ID != kb[0].ID {
		t.Fatalf("%d keys added; replica a lists %+v, b %+v; want one key both see", added, ka, kb)
	}
}

// testReplicaThrottle spreads attempts of one key over both replicas: the
// limit holds across them.
func testReplicaThrottle(t *testing.T, a, b Store) {
	for i, s := range []Store{a, b, a} {
		if _, ok := take(t, s, "client:c1", at(0)); !ok {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	for _, s := range []Store{a, b} {
		if _, ok := take(t, s, "client:c1", at(0)); ok {
			t.Fatal("a replica allowed an attempt beyond the burst made on both")
		}
	}
}
