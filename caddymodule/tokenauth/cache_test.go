package tokenauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// cached returns the cache entry of token, if any.
func cached(v *Verifier, token string) (*entry, bool) {
	v.cache.mu.Lock()
	defer v.cache.mu.Unlock()
	el, ok := v.cache.entries[sha256.Sum256([]byte(token))]
	if !ok {
		return nil, false
	}
	return el.Value.(*entry), true
}

func cacheLen(v *Verifier) int {
	v.cache.mu.Lock()
	defer v.cache.mu.Unlock()
	return len(v.cache.entries)
}

func TestCacheHit(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	ctx := context.Background()
	token := f.key.Token(claimsAt(f.clock.Now()))
	cold, err := f.verifier.Verify(ctx, token, ModeAccess)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := cached(f.verifier, token)
	if !ok {
		t.Fatal("a verified token was not cached")
	}
	if e.sum != sha256.Sum256([]byte(token)) {
		t.Fatal("the entry is not keyed by the token's SHA-256")
	}
	hot, err := f.verifier.Verify(ctx, token, ModeAccess)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(hot, cold) {
		t.Fatalf("cached claims %+v differ from %+v", hot, cold)
	}
	// The caller's copy is its own.
	hot.Audience[0], hot.Subject = "changed", "changed"
	again, err := f.verifier.Verify(ctx, token, ModeAccess)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, cold) {
		t.Fatal("changing returned claims changed the cache")
	}
	// And the answer really comes from the cache: mark the entry.
	e.claims.Workspace = "from-cache"
	if c, _ := f.verifier.Verify(ctx, token, ModeAccess); c.Workspace != "from-cache" {
		t.Fatal("the second verification did not use the cache")
	}
	if n := cacheLen(f.verifier); n != 1 {
		t.Fatalf("%d entries, want 1", n)
	}
}

func TestCacheExpiry(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	ctx := context.Background()
	now := f.clock.Now()

	short := claimsAt(now)
	short["exp"] = now.Add(20 * time.Second).Unix()
	shortToken := f.key.Token(short)
	longToken := f.key.Token(claimsAt(now)) // exp in 30 min

	for _, token := range []string{shortToken, longToken} {
		if _, err := f.verifier.Verify(ctx, token, ModeAccess); err != nil {
			t.Fatal(err)
		}
	}
	if e, ok := cached(f.verifier, shortToken); !ok || !e.expires.Equal(now.Add(20*time.Second)) {
		t.Fatalf("short-lived entry: %v %v, want it to end at exp", ok, e)
	}
	if e, ok := cached(f.verifier, longToken); !ok || !e.expires.Equal(now.Add(DefaultCacheMaxAge)) {
		t.Fatalf("long-lived entry: %v %v, want it to end at the max age", ok, e)
	}

	// At exp the entry is gone; the token is still valid within the leeway,
	// but is verified afresh and not cached again.
	f.clock.Advance(20 * time.Second)
	if _, ok := f.verifier.cache.get(sha256.Sum256([]byte(shortToken)), f.clock.Now()); ok {
		t.Fatal("entry served at its exp")
	}
	if _, err := f.verifier.Verify(ctx, shortToken, ModeAccess); err != nil {
		t.Fatalf("within the leeway: %v", err)
	}
	if _, ok := cached(f.verifier, shortToken); ok {
		t.Fatal("a token past its exp was cached")
	}
	f.clock.Advance(DefaultLeeway)
	if _, err := f.verifier.Verify(ctx, shortToken, ModeAccess); !errors.Is(err, ErrExpired) {
		t.Fatalf("err = %v, want ErrExpired", err)
	}

	f.clock.Advance(DefaultCacheMaxAge)
	if _, ok := f.verifier.cache.get(sha256.Sum256([]byte(longToken)), f.clock.Now()); ok {
		t.Fatal("entry served after the max age")
	}
}

func TestCacheKeyRemoval(t *testing.T) {
	f := newFixture(t, VerifierOptions{CacheMaxAge: time.Hour})
	ctx := context.Background()
	token := f.key.Token(claimsAt(f.clock.Now()))
	if _, err := f.verifier.Verify(ctx, token, ModeAccess); err != nil {
		t.Fatal(err)
	}
	// The backend revokes k1: the next refresh of the set drops it, and
	// with it the cached token.
	f.server.set(http.StatusOK, testkit.JWKS(testkit.NewSigner("k2")))
	f.clock.Advance(DefaultMaxAge)
	if _, err := f.verifier.Verify(ctx, token, ModeAccess); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("err = %v, want ErrUnknownKey once the key is gone", err)
	}
	if _, ok := cached(f.verifier, token); ok {
		t.Fatal("the entry of a removed key is still cached")
	}
}

func TestCacheKeyReplaced(t *testing.T) {
	f := newFixture(t, VerifierOptions{CacheMaxAge: time.Hour})
	ctx := context.Background()
	token := f.key.Token(claimsAt(f.clock.Now()))
	if _, err := f.verifier.Verify(ctx, token, ModeAccess); err != nil {
		t.Fatal(err)
	}
	// The same kid now names another key: the cached token was signed by
	// the old one and must not be served.
	f.server.set(http.StatusOK, testkit.JWKS(testkit.NewSigner("k1")))
	f.clock.Advance(DefaultMaxAge)
	if _, err := f.verifier.Verify(ctx, token, ModeAccess); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("err = %v, want ErrBadSignature", err)
	}
}

func TestCacheRefreshMode(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	ctx := context.Background()
	now := f.clock.Now()
	valid := f.key.Token(claimsAt(now))
	if _, err := f.verifier.Verify(ctx, valid, ModeRefresh); err != nil {
		t.Fatal(err)
	}
	if n := cacheLen(f.verifier); n != 0 {
		t.Fatalf("ModeRefresh cached %d entries", n)
	}
	c := claimsAt(now)
	c["exp"] = now.Add(-time.Hour).Unix()
	expired := f.key.Token(c)
	if _, err := f.verifier.Verify(ctx, expired, ModeRefresh); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verifier.Verify(ctx, expired, ModeAccess); !errors.Is(err, ErrExpired) {
		t.Fatalf("an expired token accepted by ModeRefresh then passes ModeAccess: %v", err)
	}
	// A cached access token is still checked in full by ModeRefresh.
	if _, err := f.verifier.Verify(ctx, valid, ModeAccess); err != nil {
		t.Fatal(err)
	}
	e, _ := cached(f.verifier, valid)
	e.claims.Workspace = "from-cache"
	if c, err := f.verifier.Verify(ctx, valid, ModeRefresh); err != nil || c.Workspace != "ws-1" {
		t.Fatalf("ModeRefresh read the cache: %v %v", c, err)
	}
}

// TestCacheObserved: ObserveCache hears of every access token looked up in
// the cache, a hit or a miss, and of no refresh.
func TestCacheObserved(t *testing.T) {
	var seen []bool
	f := newFixture(t, VerifierOptions{ObserveCache: func(hit bool) { seen = append(seen, hit) }})
	token := f.key.Token(claimsAt(f.clock.Now()))
	replaceKey := func() {
		f.server.set(http.StatusOK, testkit.JWKS(testkit.NewSigner("k1")))
		f.clock.Advance(DefaultMaxAge)
	}
	tests := []struct {
		name   string
		before func()
		mode   Mode
		want   []bool // the observations so far
	}{
		{"first use", nil, ModeAccess, []bool{false}},
		{"cached", nil, ModeAccess, []bool{false, true}},
		{"a refresh, which does not read the cache", nil, ModeRefresh, []bool{false, true}},
		{"cached, its key replaced", replaceKey, ModeAccess, []bool{false, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			_, _ = f.verifier.Verify(context.Background(), token, tt.mode)
			if !reflect.DeepEqual(seen, tt.want) {
				t.Fatalf("observed %v, want %v", seen, tt.want)
			}
		})
	}
}

func TestCacheDisabled(t *testing.T) {
	f := newFixture(t, VerifierOptions{CacheSize: -1})
	token := f.key.Token(claimsAt(f.clock.Now()))
	for range 2 {
		if _, err := f.verifier.Verify(context.Background(), token, ModeAccess); err != nil {
			t.Fatal(err)
		}
	}
	if f.verifier.cache != nil {
		t.Fatal("cache made with CacheSize -1")
	}
}

func TestCacheBounded(t *testing.T) {
	f := newFixture(t, VerifierOptions{CacheSize: 3})
	ctx := context.Background()
	var tokens []string
	for i := range 5 {
		c := claimsAt(f.clock.Now())
		c["jti"] = fmt.Sprint(i)
		tokens = append(tokens, f.key.Token(c))
		if _, err := f.verifier.Verify(ctx, tokens[i], ModeAccess); err != nil {
			t.Fatal(err)
		}
	}
	if n := cacheLen(f.verifier); n != 3 {
		t.Fatalf("%d entries, want 3", n)
	}
	for i, token := range tokens {
		if _, ok := cached(f.verifier, token); ok != (i >= 2) {
			t.Errorf("token %d cached: %v", i, ok)
		}
	}
}

func TestCacheEviction(t *testing.T) {
	c := newCache(3, time.Minute)
	now := epoch
	claims := func(exp time.Duration) *Claims { return &Claims{ExpiresAt: now.Add(exp)} }
	sum := func(i int) [sha256.Size]byte { return sha256.Sum256([]byte{byte(i)}) }

	c.put(sum(1), claims(10*time.Second), nil, now)
	c.put(sum(2), claims(time.Hour), nil, now)
	now = now.Add(30 * time.Second)
	// Not full, but the first entry has expired: it makes room first.
	c.put(sum(3), claims(time.Hour), nil, now)
	if _, ok := c.entries[sum(1)]; ok || len(c.entries) != 2 {
		t.Fatalf("expired entry kept; %d entries", len(c.entries))
	}
	c.put(sum(4), claims(time.Hour), nil, now)
	c.put(sum(5), claims(time.Hour), nil, now)
	// Full: the oldest goes.
	if _, ok := c.entries[sum(2)]; ok || len(c.entries) != 3 {
		t.Fatalf("oldest entry kept; %d entries", len(c.entries))
	}
	// Putting a known sum replaces it rather than adding.
	c.put(sum(5), claims(time.Hour), nil, now)
	if len(c.entries) != 3 || c.order.Len() != 3 {
		t.Fatalf("%d entries, %d in order", len(c.entries), c.order.Len())
	}
	// Past the max age, everything expires and the next put clears it all.
	now = now.Add(time.Minute)
	c.put(sum(6), claims(time.Hour), nil, now)
	if len(c.entries) != 1 || c.order.Len() != 1 {
		t.Fatalf("%d entries after all expired, want 1", len(c.entries))
	}
	c.remove(sum(6))
	if len(c.entries) != 0 || c.order.Len() != 0 {
		t.Fatal("remove left the entry")
	}
}

func TestCacheConcurrent(t *testing.T) {
	f := newFixture(t, VerifierOptions{CacheSize: 8})
	ctx := context.Background()
	var tokens []string
	for i := range 16 {
		c := claimsAt(f.clock.Now())
		c["jti"] = fmt.Sprint(i)
		tokens = append(tokens, f.key.Token(c))
	}
	other := testkit.NewSigner("k1").Token(claimsAt(f.clock.Now()))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				token := tokens[(g+i)%len(tokens)]
				c, err := f.verifier.Verify(ctx, token, ModeAccess)
				if err != nil {
					errs <- err
					return
				}
				if want := fmt.Sprint((g + i) % len(tokens)); c.ID != want {
					errs <- fmt.Errorf("jti = %q, want %q", c.ID, want)
					return
				}
				if _, err := f.verifier.Verify(ctx, other, ModeAccess); !errors.Is(err, ErrBadSignature) {
					errs <- fmt.Errorf("forged token: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := cacheLen(f.verifier); n > 8 {
		t.Fatalf("%d entries, bound 8", n)
	}
}
