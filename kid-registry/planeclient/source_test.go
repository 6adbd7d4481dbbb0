package planeclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit/fakeplane"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// newBackend serves a key plane in memory.
func newBackend(t *testing.T) (*fakeplane.KeyPlane, *httptest.Server) {
	b := fakeplane.NewKeyPlane()
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return b, srv
}

// set adds or changes c1's key kid.
func set(b *fakeplane.KeyPlane, kid string, status clientkey.Status) {
	b.Set(kid, "c1", "0123456789abcdef", status)
}

// recorder is an Observer that keeps what it saw.
type recorder struct {
	mu      sync.Mutex
	lookups map[string]int
	up      bool
	applied int64
}

func (r *recorder) Lookup(result string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups[result]++
}

func (r *recorder) Feed(up bool, applied int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.up, r.applied = up, applied
}

func (r *recorder) feed() (bool, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.up, r.applied
}

func newSource(t *testing.T, srv *httptest.Server, cfg Config) (*Source, *recorder) {
	t.Helper()
	rec := &recorder{lookups: map[string]int{}}
	cfg.URL, cfg.Client, cfg.Observer = srv.URL, srv.Client(), rec
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, rec
}

// running starts s's feed until the test ends, and waits for its first
// answer.
func running(t *testing.T, s *Source, rec *recorder) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, "the feed's first answer", func() bool { up, _ := rec.feed(); return up })
}

// source is the client address of the tests' look-ups.
const source = "192.0.2.1"

// lookup looks kid up for source, and reports whether it was found.
func lookup(s *Source, kid string) (*clientkey.Key, bool) {
	k, err := s.Lookup(context.Background(), kid, source)
	return k, err == nil
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

func TestLookup(t *testing.T) {
	b, srv := newBackend(t)
	set(b, "k1", clientkey.Active)
	s, rec := newSource(t, srv, Config{})
	tests := []struct {
		name     string
		kid      string
		found    bool
		lookups  int64  // the backend's, after the call
		observed string // the look-up's result
	}{
		{"first use", "k1", true, 1, "found"},
		{"cached", "k1", true, 1, "cached"},
		{"unknown", "k9", false, 2, "unknown"},
		{"unknown, remembered", "k9", false, 2, "remembered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rec.lookups[tt.observed]
			k, ok := lookup(s, tt.kid)
			if ok != tt.found || (ok && (k.Kid != tt.kid || k.Secret != "0123456789abcdef" || !k.Usable())) {
				t.Fatalf("Lookup(%s) = %+v, %v", tt.kid, k, ok)
			}
			if n := b.Lookups.Load(); n != tt.lookups {
				t.Fatalf("the backend was asked %d times, want %d", n, tt.lookups)
			}
			if rec.lookups[tt.observed] != before+1 {
				t.Fatalf("observed %v, want one more %s", rec.lookups, tt.observed)
			}
		})
	}
	if keys := s.Keys(); len(keys) != 1 || keys[0].Kid != "k1" {
		t.Fatalf("Keys = %+v", keys)
	}
}

// TestLookupCoalesced looks one uncached kid up from many goroutines at
// once: the backend is asked once.
func TestLookupCoalesced(t *testing.T) {
	b, srv := newBackend(t)
	set(b, "k1", clientkey.Active)
	b.Gate = make(chan struct{})
	s, _ := newSource(t, srv, Config{})
	var wg sync.WaitGroup
	var found atomic.Int64
	for range 50 {
		wg.Go(func() {
			if _, ok := lookup(s, "k1"); ok {
				found.Add(1)
			}
		})
	}
	eventually(t, "a look-up reaching the backend", func() bool { return b.Lookups.Load() > 0 })
	time.Sleep(50 * time.Millisecond) // the others queue behind it
	close(b.Gate)
	wg.Wait()
	if found.Load() != 50 || b.Lookups.Load() != 1 {
		t.Fatalf("%d of 50 found the key; the backend was asked %d times", found.Load(), b.Lookups.Load())
	}
}

// TestLookupLimited floods the source with random kids from many
// addresses: past the burst the backend is not asked, the look-ups are
// refused as busy, and a cached key is still served.
func TestLookupLimited(t *testing.T) {
	b, srv := newBackend(t)
	set(b, "k1", clientkey.Active)
	s, rec := newSource(t, srv, Config{LookupRate: 0.001, LookupBurst: 10})
	if _, ok := lookup(s, "k1"); !ok {
		t.Fatal("k1 not found")
	}
	busy := 0
	for i := range 1000 {
		k, err := s.Lookup(t.Context(), fmt.Sprintf("random-%d", i), fmt.Sprintf("192.0.2.%d", i%250))
		switch {
		case k != nil:
			t.Fatal("a random kid was found")
		case errors.Is(err, ErrBusy):
			busy++
		}
	}
	if n := b.Lookups.Load(); n != 10 || busy != 991 {
		t.Fatalf("the flood caused %d look-ups, want the burst's 10; %d busy, want 991", n, busy)
	}
	if _, ok := lookup(s, "k1"); !ok || rec.lookups["limited"] != 991 {
		t.Fatalf("after the flood: k1 found %v; limited %d", ok, rec.lookups["limited"])
	}
}

// TestLookupRationedBySource: a flood of kids from one address spends its
// own ration only; another address's look-ups are made.
func TestLookupRationedBySource(t *testing.T) {
	b, srv := newBackend(t)
	set(b, "k1", clientkey.Active)
	s, _ := newSource(t, srv, Config{SourceRate: 0.001, SourceBurst: 5})
	busy := 0
	for i := range 100 {
		if _, err := s.Lookup(t.Context(), fmt.Sprintf("random-%d", i), "198.51.100.7"); errors.Is(err, ErrBusy) {
			busy++
		}
	}
	if n := b.Lookups.Load(); n != 5 || busy != 95 {
		t.Fatalf("the flood caused %d look-ups and %d busy answers, want 5 and 95", n, busy)
	}
	if _, ok := lookup(s, "k1"); !ok {
		t.Fatal("another address's look-up was not made")
	}
}

// TestSpentRationOneAnswer (fourth review, finding 5): a source that has
// spent its ration gets ErrBusy for every kid the edge does not hold, one
// that exists, one the filter rules out and one remembered unknown alike,
// and from Refused for a key the edge holds; each costs one ration while
// it lasts. Another source is served meanwhile. While every source's
// look-ups are spent, a kid the filter rules out is busy too.
func TestSpentRationOneAnswer(t *testing.T) {
	b, srv := newBackend(t)
	for _, kid := range []string{"k-cached", "k-uncached"} {
		set(b, kid, clientkey.Active)
	}
	s, rec := newSource(t, srv, Config{SourceRate: 0.0001, SourceBurst: 4, Wait: 50 * time.Millisecond})
	if _, ok := lookup(s, "k-gone"); ok { // asked before the filter is loaded: remembered unknown
		t.Fatal("k-gone found")
	}
	running(t, s, rec)
	if _, ok := lookup(s, "k-cached"); !ok {
		t.Fatal("k-cached not found")
	}
	const prober = "198.51.100.9"
	ask := func(kid string) error { _, err := s.Lookup(t.Context(), kid, prober); return err }
	for _, kid := range []string{"k-random-1", "k-gone", "k-random-2"} { // 3 of its 4
		if err := ask(kid); !errors.Is(err, ErrUnknown) {
			t.Fatalf("%s with rations left: %v, want ErrUnknown", kid, err)
		}
	}
	if err := s.Refused(prober); err != nil { // the 4th
		t.Fatalf("Refused with a ration left: %v", err)
	}
	for name, err := range map[string]error{
		"an uncached key":      ask("k-uncached"),
		"a random kid":         ask("k-random-3"),
		"a remembered unknown": ask("k-gone"),
		"a cached key refused": s.Refused(prober),
	} {
		if !errors.Is(err, ErrBusy) {
			t.Errorf("%s, once the ration is spent: %v, want ErrBusy", name, err)
		}
	}
	if k, err := s.Lookup(t.Context(), "k-cached", prober); err != nil || k.Kid != "k-cached" {
		t.Fatalf("a cached key, asked by the source without rations: %v", err)
	}
	if k, err := s.Lookup(t.Context(), "k-uncached", "203.0.113.1"); err != nil || k.Kid != "k-uncached" {
		t.Fatalf("another source's look-up: %v", err)
	}

	spent, rec := newSource(t, srv, Config{LookupRate: 0.0001, LookupBurst: 1, Wait: 50 * time.Millisecond})
	running(t, spent, rec)
	if _, err := spent.Lookup(t.Context(), "k-uncached", source); err != nil {
		t.Fatalf("the one look-up of every source: %v", err)
	}
	if _, err := spent.Lookup(t.Context(), "k-random-4", "203.0.113.2"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a kid the filter rules out, every source's look-ups spent: %v, want ErrBusy", err)
	}
}

// TestFilterRulesOutUnknownKids: once the feed has loaded the kid filter,
// a kid it rules out is refused without asking the backend, however many
// come; a key added later is found once the feed brings its change.
func TestFilterRulesOutUnknownKids(t *testing.T) {
	b, srv := newBackend(t)
	set(b, "k1", clientkey.Active)
	s, rec := newSource(t, srv, Config{Wait: 50 * time.Millisecond})
	running(t, s, rec)
	for i := range 1000 {
		if _, err := s.Lookup(t.Context(), fmt.Sprintf("random-%d", i), fmt.Sprint("203.0.113.", i%250)); !errors.Is(err, ErrUnknown) {
			t.Fatalf("random kid %d: %v, want ErrUnknown", i, err)
		}
	}
	if n := b.Lookups.Load(); n != 0 || rec.lookups["filtered"] != 1000 {
		t.Fatalf("the backend was asked %d times; %d filtered", n, rec.lookups["filtered"])
	}
	if _, ok := lookup(s, "k1"); !ok {
		t.Fatal("k1, in the filter, not found")
	}
	set(b, "k2", clientkey.Active)
	eventually(t, "k2 found once its change arrives", func() bool { _, ok := lookup(s, "k2"); return ok })
}

// TestFeed changes keys while the feed runs: a cached key's change, and a
// kid remembered unknown being added, are seen at the next use.
func TestFeed(t *testing.T) {
	b, srv := newBackend(t)
	set(b, "k1", clientkey.Active)
	s, rec := newSource(t, srv, Config{})
	running(t, s, rec)
	if k, ok := lookup(s, "k1"); !ok || !k.Usable() {
		t.Fatal("k1 not usable")
	}
	if _, ok := lookup(s, "k2"); ok {
		t.Fatal("k2 found before it was added")
	}
	set(b, "k1", clientkey.Retired)
	set(b, "k2", clientkey.Active)
	eventually(t, "the feed applying both changes", func() bool { _, applied := rec.feed(); return applied == 3 })
	if k, ok := lookup(s, "k1"); !ok || k.Usable() || k.Status != clientkey.Retired {
		t.Fatalf("k1 after its retirement: %+v", k)
	}
	if _, ok := lookup(s, "k2"); !ok {
		t.Fatal("k2 not found after it was added")
	}
}

// TestFeedDown stops the backend's answers: the cache keeps serving,
// the feed says it is down, and when the backend answers again the feed
// catches up with the changes made meanwhile.
func TestFeedDown(t *testing.T) {
	b, srv := newBackend(t)
	set(b, "k1", clientkey.Active)
	s, rec := newSource(t, srv, Config{Wait: 50 * time.Millisecond, Retry: 50 * time.Millisecond})
	running(t, s, rec)
	if _, ok := lookup(s, "k1"); !ok {
		t.Fatal("k1 not found")
	}
	b.Down.Store(true)
	eventually(t, "the feed down", func() bool { up, _ := rec.feed(); return !up })
	if k, ok := lookup(s, "k1"); !ok || !k.Usable() {
		t.Fatal("the cache lost k1 while the backend was down")
	}
	set(b, "k1", clientkey.Retired)
	b.Down.Store(false)
	eventually(t, "the feed catching up", func() bool { up, applied := rec.feed(); return up && applied == 2 })
	if k, ok := lookup(s, "k1"); !ok || k.Usable() {
		t.Fatalf("k1 after catching up: %+v", k)
	}
}

// TestLookupInvalid refuses what the backend answers that breaks the
// key rules, a key answered for another kid, and a key of a content
// encryption the edge does not open.
func TestLookupInvalid(t *testing.T) {
	const enc = "A128CBC-HS256"
	tests := []struct {
		name string
		key  contract.ClientKey
	}{
		{"short secret", contract.ClientKey{Listed: clientkey.Listed{Kid: "k1", ClientID: "c1", Enc: enc, Status: clientkey.Active, CreatedAt: t0}, Secret: "short"}},
		{"unknown status", contract.ClientKey{Listed: clientkey.Listed{Kid: "k1", ClientID: "c1", Enc: enc, Status: "valid", CreatedAt: t0}, Secret: "0123456789abcdef"}},
		{"another kid", contract.ClientKey{Listed: clientkey.Listed{Kid: "k2", ClientID: "c1", Enc: enc, Status: clientkey.Active, CreatedAt: t0}, Secret: "0123456789abcdef"}},
		{"another content encryption", contract.ClientKey{Listed: clientkey.Listed{Kid: "k1", ClientID: "c1", Enc: "A256GCM", Status: clientkey.Active, CreatedAt: t0}, Secret: "0123456789abcdef"}},
		{"no content encryption", contract.ClientKey{Listed: clientkey.Listed{Kid: "k1", ClientID: "c1", Status: clientkey.Active, CreatedAt: t0}, Secret: "0123456789abcdef"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = json.NewEncoder(w).Encode(tt.key)
			}))
			defer srv.Close()
			s, rec := newSource(t, srv, Config{})
			if k, ok := lookup(s, "k1"); ok {
				t.Fatalf("accepted %+v", k)
			}
			if rec.lookups["failed"] != 1 {
				t.Fatalf("observed %v", rec.lookups)
			}
		})
	}
}

// TestFirstUseBeforeItsChangeArrives: without a kid filter (a backend of
// a version before it), a key looked up before the feed brings the change
// that added it stays cached when that change arrives
// (the answer already holds it), and so does one whose change came while
// it was looked up; a later change of it still drops it.
func TestFirstUseBeforeItsChangeArrives(t *testing.T) {
	b, srv := newBackend(t)
	b.NoFilter = true // else the filter refuses k1 until its change arrives
	s, rec := newSource(t, srv, Config{Wait: 50 * time.Millisecond})
	running(t, s, rec)
	// The feed applied nothing yet of k1: look it up first, then let the
	// feed bring its addition.
	b.Gate = make(chan struct{})
	set(b, "k1", clientkey.Active)
	found := make(chan bool)
	go func() { _, ok := lookup(s, "k1"); found <- ok }()
	eventually(t, "the feed to apply k1's addition", func() bool { _, applied := rec.feed(); return applied >= 1 })
	close(b.Gate)
	if !<-found {
		t.Fatal("k1 not found")
	}
	b.Gate = nil
	set(b, "k2", clientkey.Active)
	if _, ok := lookup(s, "k2"); !ok {
		t.Fatal("k2 not found")
	}
	eventually(t, "the feed to apply k2's addition", func() bool { _, applied := rec.feed(); return applied >= 2 })
	for _, kid := range []string{"k1", "k2"} {
		if !s.Cached(kid) {
			t.Fatalf("%s is not cached after the change that added it", kid)
		}
	}
	set(b, "k2", clientkey.Retired)
	eventually(t, "k2's retirement to drop it", func() bool { return !s.Cached("k2") })
	if !s.Cached("k1") {
		t.Fatal("k2's change dropped k1")
	}
	// A key whose last change is older than others applied is cached too.
	s.Forget()
	if _, ok := lookup(s, "k1"); !ok || !s.Cached("k1") {
		t.Fatal("k1, changed before k2, is not cached once looked up again")
	}
}

// TestFeedUpAtTheFirstAnswer: after a failure, the feed is up again as
// soon as the backend answers, not when a change next comes: a long wait
// with no change must not hold the gauge at 0.
func TestFeedUpAtTheFirstAnswer(t *testing.T) {
	b, srv := newBackend(t)
	set(b, "k1", clientkey.Active)
	s, rec := newSource(t, srv, Config{Wait: 20 * time.Second, Retry: 50 * time.Millisecond})
	running(t, s, rec)
	b.Down.Store(true)
	set(b, "k2", clientkey.Active) // ends the long poll held meanwhile; the next request fails
	eventually(t, "the feed down", func() bool { up, _ := rec.feed(); return !up })
	b.Down.Store(false)
	back := time.Now()
	eventually(t, "the feed up", func() bool { up, _ := rec.feed(); return up })
	if took := time.Since(back); took > 2*time.Second {
		t.Fatalf("the feed was up %v after the backend answered again, want at once", took)
	}
}
