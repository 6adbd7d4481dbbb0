package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

func testDataKey(t *testing.T, s Store) {
	_, err := s.DataKey(ctx(t))
	wantErr(t, err, store.ErrNotFound)
	k := store.WrappedKey{ID: "dk1", Wrapped: []byte("wrapped by the keeper"), Keeper: "sha256:1", CreatedAt: at(0)}
	must(t, s.AddDataKey(ctx(t), k))
	rival := store.WrappedKey{ID: "dk2", Wrapped: []byte("another process's"), CreatedAt: at(0)}
	wantErr(t, s.AddDataKey(ctx(t), rival), store.ErrConflict)
	got, err := s.DataKey(ctx(t))
	must(t, err)
	if got.ID != k.ID || !bytes.Equal(got.Wrapped, k.Wrapped) || got.Keeper != k.Keeper || !got.CreatedAt.Equal(k.CreatedAt) {
		t.Fatalf("DataKey = %+v, want %+v", got, k)
	}
	next := store.WrappedKey{ID: "dk1", Wrapped: []byte("wrapped by the next keeper"), Keeper: "sha256:2"}
	wantErr(t, s.RewrapDataKey(ctx(t), []byte("not what is stored"), next), store.ErrConflict)
	wantErr(t, s.RewrapDataKey(ctx(t), k.Wrapped, store.WrappedKey{ID: "dk2", Wrapped: []byte("x")}), store.ErrConflict)
	must(t, s.RewrapDataKey(ctx(t), k.Wrapped, next))
	if got, _ := s.DataKey(ctx(t)); string(got.Wrapped) != "wrapped by the next keeper" || got.ID != "dk1" || got.Keeper != "sha256:2" {
		t.Fatalf("after the rewrap: %+v", got)
	}
}

func testSecrets(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seedBytes := bytes.Repeat([]byte{0xa5}, 32)
	must(t, s.AddSigningKey(ctx(t), store.SigningKey{ID: "k1", Generation: 1, Seed: seedBytes, CreatedAt: at(0)}))
	_, err := s.HashKey(ctx(t), "client-secrets", bytes.Repeat([]byte{0x5a}, 32), at(0))
	must(t, err)
	for i, key := range []string{"whsec_first-subscription-key", ""} {
		must(t, s.CreateSubscription(ctx(t), store.Subscription{
			ID: []string{"s1", "s2"}[i], WorkspaceID: "w1", Endpoint: []string{"https://a.example/h", "https://b.example/h"}[i],
			Protocol: "https", SigningKey: key, Status: store.SubscriptionActive, CreatedAt: at(0),
		}, 0, ev(audit.SubscriptionCreate)))
	}
	got, err := s.Secrets(ctx(t))
	must(t, err)
	want := []store.StoredSecret{
		{Kind: store.SecretHashKey, ID: "client-secrets", Value: string(bytes.Repeat([]byte{0x5a}, 32))},
		{Kind: store.SecretSigningKey, ID: "k1", Value: string(seedBytes)},
		{Kind: store.SecretWebhookKey, ID: "s1", Value: "whsec_first-subscription-key"},
	}
	bySpot := func(a, b store.StoredSecret) int { return strings.Compare(string(a.Kind)+a.ID, string(b.Kind)+b.ID) }
	slices.SortFunc(got, bySpot)
	if !slices.Equal(got, want) {
		t.Fatalf("Secrets = %q, want %q", got, want)
	}
	for _, sec := range want {
		next := "hdc1.sealed-form-of-" + sec.ID
		wantErr(t, s.ReplaceSecret(ctx(t), store.StoredSecret{Kind: sec.Kind, ID: sec.ID, Value: "not the stored value"}, next), store.ErrConflict)
		must(t, s.ReplaceSecret(ctx(t), sec, next))
	}
	got, err = s.Secrets(ctx(t))
	must(t, err)
	for _, sec := range got {
		if sec.Value != "hdc1.sealed-form-of-"+sec.ID {
			t.Fatalf("after ReplaceSecret: %+v", sec)
		}
	}
	keys, err := s.ListSigningKeys(ctx(t))
	must(t, err)
	if len(keys) != 1 || string(keys[0].Seed) != "hdc1.sealed-form-of-k1" {
		t.Fatalf("the signing keys read back as %+v", keys)
	}
	must(t, s.Compact(ctx(t)))
}

// testKeylessSubscriptions: the subscriptions stored without a signing
// key are listed; a key fills only a subscription without one, and of
// concurrent fills (two backends starting at once) one is made.
func testKeylessSubscriptions(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	for i, key := range []string{"hdc1.sealed-key", "", ""} {
		must(t, s.CreateSubscription(ctx(t), store.Subscription{
			ID: []string{"s1", "s2", "s3"}[i], WorkspaceID: "w1", Endpoint: []string{"https://a.example/h", "https://b.example/h", "https://c.example/h"}[i],
			Protocol: "https", SigningKey: key, Status: store.SubscriptionActive, CreatedAt: at(0),
		}, 0, ev(audit.SubscriptionCreate)))
	}
	ids, err := s.KeylessSubscriptions(ctx(t))
	if err != nil || !slices.Equal(ids, []string{"s2", "s3"}) {
		t.Fatalf("KeylessSubscriptions = %q, %v", ids, err)
	}
	wantErr(t, s.FillSigningKey(ctx(t), "s1", "hdc1.another"), store.ErrConflict)
	wantErr(t, s.FillSigningKey(ctx(t), "nobody", "hdc1.another"), store.ErrConflict)
	must(t, s.FillSigningKey(ctx(t), "s2", "hdc1.filled"))
	wantErr(t, s.FillSigningKey(ctx(t), "s2", "hdc1.another"), store.ErrConflict)
	var made atomic.Int64
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			switch err := s.FillSigningKey(ctx(t), "s3", fmt.Sprint("hdc1.filler-", i)); {
			case err == nil:
				made.Add(1)
			case !errors.Is(err, store.ErrConflict):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if made.Load() != 1 {
		t.Fatalf("%d concurrent fills were made, want 1", made.Load())
	}
	for id, want := range map[string]string{"s1": "hdc1.sealed-key", "s2": "hdc1.filled"} {
		if sub, err := s.GetSubscription(ctx(t), "w1", id); err != nil || sub.SigningKey != want {
			t.Fatalf("%s's key = %q, %v; want %q", id, sub.SigningKey, err, want)
		}
	}
	if ids, err := s.KeylessSubscriptions(ctx(t)); err != nil || len(ids) != 0 {
		t.Fatalf("keyless after the fills: %q, %v", ids, err)
	}
}
