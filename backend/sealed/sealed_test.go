package sealed

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/postgres"
	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/testkit"
)

var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// engines open an empty store of each engine.
var engines = []struct {
	name string
	open func(t *testing.T) (store.Store, error)
}{
	{"sqlite", func(t *testing.T) (store.Store, error) {
		return sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	}},
	{"postgres", func(t *testing.T) (store.Store, error) { return postgres.Open(t.Context(), pgtest.URL(t)) }},
}

// plainStore returns a SQLite store with a signing key, a hash key and a
// subscription's signing key stored in the clear, as an earlier version
// stored them.
func plainStore(t *testing.T) store.Store {
	t.Helper()
	return plainStoreOf(t, engines[0].open)
}

// plainStoreOf is plainStore on the store open returns.
func plainStoreOf(t *testing.T, open func(t *testing.T) (store.Store, error)) store.Store {
	t.Helper()
	st, err := open(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	if _, err := st.EnsureWorkspace(ctx, "w1", now); err != nil {
		t.Fatal(err)
	}
	must(t, st.AddSigningKey(ctx, store.SigningKey{ID: "k1", Generation: 1, Seed: bytes.Repeat([]byte{1}, 32), CreatedAt: now}))
	must(t, st.AddSigningKey(ctx, store.SigningKey{ID: "k2", Generation: 2, Seed: bytes.Repeat([]byte{2}, 32), CreatedAt: now}))
	if _, err := st.HashKey(ctx, "client-secrets", bytes.Repeat([]byte{3}, 32), now); err != nil {
		t.Fatal(err)
	}
	must(t, st.CreateSubscription(ctx, store.Subscription{ID: "s1", WorkspaceID: "w1", Endpoint: "https://h.example/a",
		Protocol: "https", EventNames: []string{"user.delete"}, SigningKey: "whsec_plain-subscription-key", Status: store.SubscriptionActive, CreatedAt: now}, 0,
		audit.Event{At: now, Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: "w1",
			Entity: audit.Entity{Kind: audit.EntitySubscription, ID: "12345678-1234-4234-8234-123456789abc"}}))
	return st
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenSealsWhatAnEarlierVersionLeftPlain(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { testOpenSealsPlain(t, plainStoreOf(t, e.open)) })
	}
}

func testOpenSealsPlain(t *testing.T, st store.Store) {
	k := testkit.Keeper(t)
	s, err := Open(t.Context(), st, k, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := st.Secrets(t.Context())
	must(t, err)
	if len(secrets) != 4 {
		t.Fatalf("%d secrets stored, want 4", len(secrets))
	}
	for _, sec := range secrets {
		if !keeper.IsSealed(sec.Value) {
			t.Errorf("the %s of %s is stored in the clear", sec.Kind, sec.ID)
		}
	}
	keys, err := s.ListSigningKeys(t.Context())
	must(t, err)
	if len(keys) != 2 || !bytes.Equal(keys[1].Seed, bytes.Repeat([]byte{2}, 32)) {
		t.Fatalf("the signing keys read back as %+v", keys)
	}
	hk, err := s.HashKey(t.Context(), "client-secrets", bytes.Repeat([]byte{9}, 32), now)
	if err != nil || !bytes.Equal(hk, bytes.Repeat([]byte{3}, 32)) {
		t.Fatalf("the hash key reads back as %x, %v", hk, err)
	}
	if k.Calls() != 1 {
		t.Fatalf("the keeper was called %d times, want 1 (the data key's wrap)", k.Calls())
	}
	again, err := Open(t.Context(), st, k, zap.NewNop())
	if err != nil || k.Calls() != 2 {
		t.Fatalf("a second start: %v, %d calls in all (want 2: one unwrap more)", err, k.Calls())
	}
	if keys, _ := again.ListSigningKeys(t.Context()); len(keys) != 2 {
		t.Fatalf("a second start reads %d signing keys", len(keys))
	}
}

func TestWrittenSealedAndBound(t *testing.T) {
	st := plainStore(t)
	core, logs := observer.New(zap.ErrorLevel)
	s, err := Open(t.Context(), st, testkit.Keeper(t), zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	must(t, s.AddSigningKey(ctx, store.SigningKey{ID: "k3", Generation: 3, Seed: bytes.Repeat([]byte{4}, 32), CreatedAt: now}))
	secrets, err := st.Secrets(ctx)
	must(t, err)
	byID := map[string]store.StoredSecret{}
	for _, sec := range secrets {
		byID[sec.ID] = sec
		if !keeper.IsSealed(sec.Value) {
			t.Fatalf("the %s of %s is written in the clear", sec.Kind, sec.ID)
		}
	}
	// k1's sealed seed copied over k2's: k2 no longer opens, the others do.
	must(t, st.ReplaceSecret(ctx, byID["k2"], byID["k1"].Value))
	for range 2 {
		keys, err := s.ListSigningKeys(ctx)
		must(t, err)
		if len(keys) != 2 || keys[0].ID != "k1" || keys[1].ID != "k3" {
			t.Fatalf("with k2's seed moved: %+v", keys)
		}
	}
	if n := logs.FilterMessageSnippet("does not open").Len(); n != 1 {
		t.Fatalf("the seed that does not open was logged %d times, want once", n)
	}
	for _, e := range logs.All() {
		for _, f := range e.Context {
			if f.Key != "kind" && f.Key != "id" {
				t.Fatalf("the log line carries %s", f.Key)
			}
		}
	}
}

func TestDeliveryOfAKeyThatDoesNotOpen(t *testing.T) {
	st := plainStore(t)
	s, err := Open(t.Context(), st, testkit.Keeper(t), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	_, err = s.PublishEvent(ctx, store.Event{ID: "e1", WorkspaceID: "w1", Type: "user.delete", Data: []byte(`{}`), CreatedAt: now})
	must(t, err)
	claim := store.Claim{Owner: "o1", Now: now.Add(time.Second), LeaseUntil: now.Add(time.Minute), Limit: 10}
	ds, err := s.ClaimDeliveries(ctx, claim)
	must(t, err)
	if len(ds) != 1 || ds[0].Subscription.SigningKey != "whsec_plain-subscription-key" || ds[0].Subscription.SigningKeyErr != nil {
		t.Fatalf("claimed %+v", ds)
	}
	secrets, _ := st.Secrets(ctx)
	for _, sec := range secrets {
		if sec.ID == "s1" {
			must(t, st.ReplaceSecret(ctx, sec, sec.Value[:len(sec.Value)-4]+"AAAA"))
		}
	}
	_, err = s.PublishEvent(ctx, store.Event{ID: "e2", WorkspaceID: "w1", Type: "user.delete", Data: []byte(`{}`), CreatedAt: now})
	must(t, err)
	claim.Owner = "o2"
	ds, err = s.ClaimDeliveries(ctx, claim)
	must(t, err)
	if len(ds) != 1 || ds[0].Subscription.SigningKey != "" || !errors.Is(ds[0].Subscription.SigningKeyErr, keeper.ErrOpen) {
		t.Fatalf("a delivery whose key was altered: %+v", ds)
	}
}

func TestAuditChainKeyed(t *testing.T) {
	st := plainStore(t)
	if _, err := Open(t.Context(), st, testkit.Keeper(t), zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	r, err := st.AppendAudit(t.Context(), audit.Event{At: now, Action: audit.Login, Outcome: audit.Success, Workspace: "w1"})
	if err != nil || !r.Keyed {
		t.Fatalf("a record appended after Open: %+v, %v", r, err)
	}
	h, err := st.AuditHeads(t.Context())
	must(t, err)
	for _, head := range h {
		if head.Workspace == "w1" {
			must(t, store.VerifyAudit(t.Context(), st, head, store.AuditCheck{}))
		}
	}
}

func TestRewrap(t *testing.T) {
	st := plainStore(t)
	from, to := testkit.Keeper(t), testkit.Keeper(t)
	s, err := Open(t.Context(), st, from, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := s.ListSigningKeys(t.Context())
	for _, run := range []struct {
		name    string
		changed bool
	}{{"first run", true}, {"run again", false}} {
		t.Run(run.name, func(t *testing.T) {
			_, changed, err := Rewrap(t.Context(), st, from, to)
			if err != nil || changed != run.changed {
				t.Fatalf("Rewrap = %v, %v; want changed %v", changed, err, run.changed)
			}
		})
	}
	if _, err := Open(t.Context(), st, from, zap.NewNop()); !errors.Is(err, ErrKeeper) || !errors.Is(err, keeper.ErrUnwrap) {
		t.Fatalf("the old keeper after the rewrap: %v", err)
	}
	s, err = Open(t.Context(), st, to, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.ListSigningKeys(context.Background())
	if len(got) != len(want) || !bytes.Equal(got[0].Seed, want[0].Seed) {
		t.Fatal("the rewrap changed what the data key seals")
	}
}

// TestRewrapStore: the store's rewrap is recorded once in the
// installation's trail, in the name of its person, under the data key's
// id; a run again changes and records nothing; a rewrap without a person
// changes nothing; a registry's rewrap is recorded in the trail returned.
func TestRewrapStore(t *testing.T) {
	st := plainStore(t)
	from, to := testkit.Keeper(t), testkit.Keeper(t)
	if _, err := Open(t.Context(), st, from, zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	by := audit.Person{Name: "alice@host", Role: contract.RoleOperator, Direct: true}
	if _, _, _, err := RewrapStore(t.Context(), st, from, to, audit.Person{}); !errors.Is(err, audit.ErrNoPerson) {
		t.Fatalf("a rewrap without a person: %v", err)
	}
	var id string
	for _, run := range []struct {
		name    string
		changed bool
	}{{"first run", true}, {"run again", false}} {
		t.Run(run.name, func(t *testing.T) {
			trail, got, changed, err := RewrapStore(t.Context(), st, from, to, by)
			if err != nil || changed != run.changed || trail == nil {
				t.Fatalf("RewrapStore = %v, %v; want changed %v", changed, err, run.changed)
			}
			id = got
		})
	}
	trail, err := Open(t.Context(), st, to, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	must(t, trail.RecordRewrap(t.Context(), by, "registry-key"))
	records, err := st.ListAudit(t.Context(), store.AuditFilter{})
	must(t, err)
	var got []string
	for _, r := range records {
		if r.Action == audit.KeeperRewrap && r.Person == by && r.Entity.Kind == audit.EntityDataKey {
			got = append(got, r.Entity.ID)
		}
	}
	if want := []string{id, "registry-key"}; !slices.Equal(got, want) {
		t.Fatalf("the installation's trail records rewraps of %q, want %q", got, want)
	}
}

// rivalFirst is a store on which another process adds its data key
// between this one's look and its add, as replicas starting together do.
type rivalFirst struct {
	store.Store
	rival *keeper.DataKey
	k     *keeper.Keeper
}

// AddDataKey implements store.Store: the rival's key is stored first.
func (s *rivalFirst) AddDataKey(ctx context.Context, k store.WrappedKey) error {
	wrapped, err := s.k.Wrap(ctx, s.rival)
	if err != nil {
		return err
	}
	if err := s.Store.AddDataKey(ctx, store.WrappedKey{ID: s.rival.ID(), Wrapped: wrapped, Keeper: s.k.ID(), CreatedAt: now}); err != nil {
		return err
	}
	return s.Store.AddDataKey(ctx, k)
}

// TestOpenAfterARival opens a store whose data key another process made
// while this one was making its own: Open uses the other's.
func TestOpenAfterARival(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			st, err := e.open(t)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			k := testkit.Keeper(t)
			rival := keeper.NewDataKey()
			s, err := Open(t.Context(), &rivalFirst{Store: st, rival: rival, k: k}, k, zap.NewNop())
			if err != nil {
				t.Fatalf("Open after a rival made the data key: %v", err)
			}
			if s.key.ID() != rival.ID() {
				t.Fatalf("data key %s, want the rival's %s", s.key.ID(), rival.ID())
			}
		})
	}
}

// TestClientKeysSealed adds, rotates and imports client keys through the
// sealed store: the database holds each secret sealed for its kid, the
// sealed store opens it, and a secret copied to another kid does not open.
func TestClientKeysSealed(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			st := plainStoreOf(t, e.open)
			s, err := Open(t.Context(), st, testkit.Keeper(t), zap.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			ev := func(kid string, a audit.Action) audit.Event {
				return audit.Event{At: now, Action: a, Outcome: audit.Success, Workspace: "w1", Entity: audit.Entity{Kind: audit.EntityKey, ID: kid}}
			}
			key := func(kid, secret string) store.ClientKey {
				return store.ClientKey{Key: clientkey.Key{Kid: kid, ClientID: "c1", Secret: secret, Enc: "A128CBC-HS256", Status: clientkey.Active, CreatedAt: now}, WorkspaceID: "w1"}
			}
			added, err := s.AddClientKey(ctx, key("k1", "sixteen-byte-one"), ev("k1", audit.KeyAdd))
			must(t, err)
			_, err = s.RotateClientKey(ctx, key("k2", "sixteen-byte-two"), false, ev("k2", audit.KeyRotate))
			must(t, err)
			must(t, s.ImportClientKeys(ctx, []store.ClientKey{key("k3", "sixteen-byte-3rd")}, []audit.Event{ev("k3", audit.KeyAdd)}))
			if added.Secret != "" {
				t.Fatalf("AddClientKey returned the secret")
			}
			for kid, plain := range map[string]string{"k1": "sixteen-byte-one", "k2": "sixteen-byte-two", "k3": "sixteen-byte-3rd"} {
				raw, err := st.ClientKey(ctx, kid)
				must(t, err)
				if !keeper.IsSealed(raw.Secret) || bytes.Contains([]byte(raw.Secret), []byte(plain)) {
					t.Fatalf("%s is stored as %q", kid, raw.Secret)
				}
				opened, err := s.ClientKey(ctx, kid)
				if err != nil || opened.Secret != plain {
					t.Fatalf("%s opened: %q, %v", kid, opened.Secret, err)
				}
			}
			// k1's sealed secret, stored as k4's.
			raw, _ := st.ClientKey(ctx, "k1")
			must(t, st.ImportClientKeys(ctx, []store.ClientKey{{Key: clientkey.Key{Kid: "k4", ClientID: "c1", Secret: raw.Secret, Enc: "A128CBC-HS256", Status: clientkey.Active, CreatedAt: now}}},
				[]audit.Event{ev("k4", audit.KeyAdd)}))
			if k, err := s.ClientKey(ctx, "k4"); err == nil || k.Secret != "" {
				t.Fatalf("a secret moved to another kid opened: %q, %v", k.Secret, err)
			}
		})
	}
}
