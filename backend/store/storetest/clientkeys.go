package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// keyEvent is the audit record of a change of the key kid.
func keyEvent(a audit.Action, kid string) audit.Event {
	return audit.Event{At: at(0), Action: a, Outcome: audit.Success, Workspace: "w1", Entity: audit.Entity{Kind: audit.EntityKey, ID: kid}}
}

func clientKey(kid, client string) store.ClientKey {
	return store.ClientKey{Key: clientkey.Key{Kid: kid, ClientID: client, Secret: "sealed:" + kid, Enc: "A128CBC-HS256",
		Status: clientkey.Active, CreatedAt: at(0)}, WorkspaceID: "w1"}
}

// changes returns the key changes after n and the newest number.
func changes(t *testing.T, s Store, after int64) ([]clientkey.Change, int64) {
	t.Helper()
	cs, last, err := s.ClientKeyChanges(ctx(t), after, 100)
	must(t, err)
	return cs, last
}

func testClientKeys(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	if _, err := s.ClientKey(ctx(t), "k1"); err != store.ErrNotFound {
		t.Fatalf("ClientKey of a missing kid: %v", err)
	}
	if cs, last := changes(t, s, 0); len(cs) != 0 || last != 0 {
		t.Fatalf("changes of an empty key plane: %v, %d", cs, last)
	}
	k1, err := s.AddClientKey(ctx(t), clientKey("k1", "c1"), keyEvent(audit.KeyAdd, "k1"))
	must(t, err)
	if k1.Seq != 1 || k1.Status != clientkey.Active {
		t.Fatalf("added: %+v", k1)
	}
	_, err = s.AddClientKey(ctx(t), clientKey("k1", "c2"), keyEvent(audit.KeyAdd, "k1"))
	wantErr(t, err, store.ErrConflict)
	_, err = s.RotateClientKey(ctx(t), clientKey("k9", "nobody"), false, keyEvent(audit.KeyRotate, "k9"))
	wantErr(t, err, store.ErrNotFound)
	// The last active key is not retired unforced.
	var lock *clientkey.LockOutError
	if _, err := s.RetireClientKey(ctx(t), "k1", false, at(30e9), keyEvent(audit.KeyRetire, "k1")); !errors.As(err, &lock) {
		t.Fatalf("the retirement of c1's only key: %v, want a *clientkey.LockOutError", err)
	}

	rotated := clientKey("k2", "c1")
	rotated.CreatedAt = at(60e9)
	k2, err := s.RotateClientKey(ctx(t), rotated, false, keyEvent(audit.KeyRotate, "k2"))
	must(t, err)
	if r := lastAudit(t, s, "w1"); r.Action != audit.KeyRotate || !slices.Equal(r.Replaced, []string{"k1"}) || r.Weakened != nil {
		t.Fatalf("the rotation's record: %+v, want it to name k1, replaced", r)
	}
	got, err := s.ClientKey(ctx(t), "k1")
	must(t, err)
	if got.Status != clientkey.Retiring || !got.RetiringAt.Equal(at(60e9)) || got.Seq != 2 || k2.Seq != 3 {
		t.Fatalf("after the rotation: k1 %+v, k2 %+v", got, k2)
	}
	retired, err := s.RetireClientKey(ctx(t), "k1", false, at(120e9), keyEvent(audit.KeyRetire, "k1"))
	must(t, err)
	again, err := s.RetireClientKey(ctx(t), "k1", false, at(180e9), keyEvent(audit.KeyRetire, "k1"))
	must(t, err)
	if retired.Status != clientkey.Retired || !retired.RetiredAt.Equal(at(120e9)) || retired.Seq != 4 || again != retired {
		t.Fatalf("retired: %+v, then %+v", retired, again)
	}
	_, err = s.RetireClientKey(ctx(t), "k9", false, at(0), keyEvent(audit.KeyRetire, "k9"))
	wantErr(t, err, store.ErrNotFound)

	got, err = s.ClientKey(ctx(t), "k2")
	must(t, err)
	if got != k2 || got.Secret != "sealed:k2" || got.WorkspaceID != "w1" || got.Enc != "A128CBC-HS256" {
		t.Fatalf("ClientKey(k2) = %+v, want %+v", got, k2)
	}
	cs, last := changes(t, s, 0)
	if want := []clientkey.Change{{Kid: "k2", Seq: 3}, {Kid: "k1", Seq: 4}}; !slices.Equal(cs, want) || last != 4 {
		t.Fatalf("changes = %v, %d; want %v, 4", cs, last, want)
	}
	if cs, _ := changes(t, s, 3); !slices.Equal(cs, []clientkey.Change{{Kid: "k1", Seq: 4}}) {
		t.Fatalf("changes after 3: %v", cs)
	}
	var actions []audit.Action
	for _, r := range listAudit(t, s, store.AuditFilter{Workspace: "w1"}) {
		if r.Entity.Kind == audit.EntityKey {
			actions = append(actions, r.Action)
		}
	}
	if want := []audit.Action{audit.KeyAdd, audit.KeyRotate, audit.KeyRetire, audit.KeyRetire}; !slices.Equal(actions, want) {
		t.Fatalf("audited %v, want %v", actions, want)
	}
}

// testClientKeyKinds: a rotation to a weaker kind is refused unless
// allowed, and then recorded with what the key gave up; nothing changes
// when it is refused.
func testClientKeyKinds(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	gcm := clientKey("k-gcm", "c1")
	gcm.Enc = "A256GCM"
	_, err := s.AddClientKey(ctx(t), gcm, keyEvent(audit.KeyAdd, "k-gcm"))
	must(t, err)
	weaker := clientKey("k-cbc", "c1")
	weaker.CreatedAt = at(60e9)
	var refused *clientkey.WeakerError
	if _, err := s.RotateClientKey(ctx(t), weaker, false, keyEvent(audit.KeyRotate, "k-cbc")); !errors.As(err, &refused) {
		t.Fatalf("a rotation from A256GCM to A128CBC-HS256: %v, want a *clientkey.WeakerError", err)
	}
	if k, err := s.ClientKey(ctx(t), "k-gcm"); err != nil || k.Status != clientkey.Active {
		t.Fatalf("after the refused rotation: %+v, %v", k, err)
	}
	if _, err := s.ClientKey(ctx(t), "k-cbc"); err != store.ErrNotFound {
		t.Fatalf("the refused rotation stored its key: %v", err)
	}
	_, err = s.RotateClientKey(ctx(t), weaker, true, keyEvent(audit.KeyRotate, "k-cbc"))
	must(t, err)
	r := lastAudit(t, s, "w1")
	if r.Entity.ID != "k-cbc" || !slices.Equal(r.Replaced, []string{"k-gcm"}) ||
		!slices.Equal(r.Weakened, []string{clientkey.LostEnc, clientkey.LostFreshness}) {
		t.Fatalf("the weakening rotation's record: %+v", r)
	}
	// The rotation is found by either key.
	for _, kid := range []string{"k-gcm", "k-cbc"} {
		found := listAudit(t, s, store.AuditFilter{Workspace: "w1", Entity: kid})
		if !slices.ContainsFunc(found, func(f audit.Record) bool { return f.Seq == r.Seq }) {
			t.Fatalf("a search by %s: %+v, without the rotation", kid, found)
		}
	}
}

// lastAudit returns the last record of ws's chain.
func lastAudit(t *testing.T, s Store, ws string) audit.Record {
	t.Helper()
	rs := listAudit(t, s, store.AuditFilter{Workspace: ws})
	if len(rs) == 0 {
		t.Fatalf("no record in %s's trail", ws)
	}
	return rs[len(rs)-1]
}

func testClientKeyList(t *testing.T, s Store) {
	var keys []store.ClientKey
	var events []audit.Event
	for i := range 5 {
		k := clientKey(fmt.Sprintf("k%d", i), []string{"c1", "c2"}[i%2])
		k.Status = clientkey.Retiring
		k.RetiringAt = at(1e9)
		keys, events = append(keys, k), append(events, keyEvent(audit.KeyAdd, k.Kid))
	}
	must(t, s.ImportClientKeys(ctx(t), keys, events))
	dup := []store.ClientKey{clientKey("k5", "c1"), clientKey("k0", "c1")}
	wantErr(t, s.ImportClientKeys(ctx(t), dup, events[:2]), store.ErrConflict)
	if _, err := s.ClientKey(ctx(t), "k5"); err != store.ErrNotFound {
		t.Fatalf("a failed import stored k5: %v", err)
	}
	if one, err := s.ListClientKeys(ctx(t), store.ClientKeyFilter{Kid: "k3", Limit: 10}); err != nil || len(one) != 1 || one[0].Kid != "k3" || one[0].Secret != "" {
		t.Fatalf("the key of kid k3: %+v, %v", one, err)
	}
	if none, err := s.ListClientKeys(ctx(t), store.ClientKeyFilter{Kid: "k-none", Limit: 10}); err != nil || len(none) != 0 {
		t.Fatalf("the key of a kid nobody has: %+v, %v", none, err)
	}
	page, err := s.ListClientKeys(ctx(t), store.ClientKeyFilter{After: "k0", Limit: 2})
	must(t, err)
	if len(page) != 2 || page[0].Kid != "k1" || page[1].Kid != "k2" || page[0].Secret != "" || page[0].Status != clientkey.Retiring {
		t.Fatalf("a page after k0: %+v", page)
	}
	page, err = s.ListClientKeys(ctx(t), store.ClientKeyFilter{ClientID: "c2", Limit: 10})
	must(t, err)
	if len(page) != 2 || page[0].Kid != "k1" || page[1].Kid != "k3" {
		t.Fatalf("c2's keys: %+v", page)
	}
	got, err := s.ClientKey(ctx(t), "k4")
	must(t, err)
	if got.Status != clientkey.Retiring || !got.RetiringAt.Equal(at(1e9)) || got.Seq != 5 {
		t.Fatalf("imported k4: %+v", got)
	}
}

// testClientKeyConcurrentChanges changes keys from many goroutines: the
// numbers are 1..n, each once, and a reader that follows them sees every
// kid.
func testClientKeyConcurrentChanges(t *testing.T, s Store) {
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			kid := fmt.Sprintf("k%02d", i)
			_, err := s.AddClientKey(ctx(t), clientKey(kid, "c1"), keyEvent(audit.KeyAdd, kid))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	seen := map[string]bool{}
	var after int64
	for {
		cs, last, err := s.ClientKeyChanges(ctx(t), after, 7)
		must(t, err)
		for _, c := range cs {
			if c.Seq != after+1 {
				t.Fatalf("change %v after %d", c, after)
			}
			seen[c.Kid], after = true, c.Seq
		}
		if len(cs) < 7 {
			if last != n {
				t.Fatalf("last = %d, want %d", last, n)
			}
			break
		}
	}
	if len(seen) != n {
		t.Fatalf("followed %d kids, want %d", len(seen), n)
	}
}

// testClientKeyNotices listens for key changes while keys are added: an
// engine that notifies does so (a notice may be lost before the listening
// starts, so keys are added until one comes); one that cannot says so.
func testClientKeyNotices(t *testing.T, s Store) {
	ctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	notices := make(chan struct{}, 1)
	listened := make(chan error, 1)
	go func() {
		listened <- s.ListenClientKeys(ctx, func() {
			select {
			case notices <- struct{}{}:
			default:
			}
		})
	}()
	deadline := time.After(10 * time.Second)
	for i := 0; ; i++ {
		kid := fmt.Sprintf("k%d", i)
		_, err := s.AddClientKey(ctx, clientKey(kid, "c1"), keyEvent(audit.KeyAdd, kid))
		must(t, err)
		select {
		case <-notices:
			cancel()
			if err := <-listened; err != nil {
				t.Fatalf("ListenClientKeys after its context ended: %v", err)
			}
			return
		case err := <-listened:
			if err != store.ErrNoListen {
				t.Fatalf("ListenClientKeys = %v", err)
			}
			return
		case <-deadline:
			t.Fatal("no notice of the key changes")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
