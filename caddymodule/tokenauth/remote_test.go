package tokenauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/health-data-connect/hdc/internal/testkit"
)

func TestRemoteUnknownKidCooldown(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	ctx := context.Background()
	if _, err := f.verifier.Verify(ctx, f.key.Token(claimsAt(f.clock.Now())), ModeAccess); err != nil {
		t.Fatal(err)
	}
	if n := f.server.hits.Load(); n != 1 {
		t.Fatalf("%d fetches for the first token, want 1", n)
	}
	// A spray of made-up kids: the first refetches, the rest wait for the cooldown.
	f.clock.Advance(DefaultCooldown)
	for i := range 20 {
		k := testkit.NewSigner(fmt.Sprintf("forged-%d", i))
		if _, err := f.verifier.Verify(ctx, k.Token(claimsAt(f.clock.Now())), ModeAccess); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("err = %v, want ErrUnknownKey", err)
		}
		f.clock.Advance(time.Second)
	}
	if n := f.server.hits.Load(); n != 2 {
		t.Fatalf("%d fetches after 20 unknown kids within the cooldown, want 2", n)
	}
	f.clock.Advance(DefaultCooldown)
	if _, err := f.source.Key(ctx, "forged-again"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("err = %v, want ErrUnknownKey", err)
	}
	if n := f.server.hits.Load(); n != 3 {
		t.Fatalf("%d fetches after the cooldown, want 3", n)
	}
}

func TestRemoteRotation(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	ctx := context.Background()
	if _, err := f.verifier.Verify(ctx, f.key.Token(claimsAt(f.clock.Now())), ModeAccess); err != nil {
		t.Fatal(err)
	}
	k2 := testkit.NewSigner("k2")
	f.server.set(http.StatusOK, testkit.JWKS(f.key, k2))
	f.clock.Advance(DefaultCooldown)
	if _, err := f.verifier.Verify(ctx, k2.Token(claimsAt(f.clock.Now())), ModeAccess); err != nil {
		t.Fatalf("the new key was not picked up: %v", err)
	}
	if _, err := f.verifier.Verify(ctx, f.key.Token(claimsAt(f.clock.Now())), ModeAccess); err != nil {
		t.Fatalf("the old key was lost: %v", err)
	}
	if n := f.server.hits.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
}

// TestRemoteRotationWithinCooldown documents the price of the cooldown: a key
// published less than a cooldown after the last fetch waits for its end.
func TestRemoteRotationWithinCooldown(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	ctx := context.Background()
	if _, err := f.source.Key(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	k2 := testkit.NewSigner("k2")
	f.server.set(http.StatusOK, testkit.JWKS(f.key, k2))
	f.clock.Advance(DefaultCooldown / 2)
	if _, err := f.source.Key(ctx, "k2"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("err = %v, want ErrUnknownKey within the cooldown", err)
	}
	f.clock.Advance(DefaultCooldown / 2)
	if _, err := f.source.Key(ctx, "k2"); err != nil {
		t.Fatalf("after the cooldown: %v", err)
	}
}

func TestRemoteMaxAge(t *testing.T) {
	f := newFixture(t, VerifierOptions{})
	ctx := context.Background()
	if _, err := f.source.Key(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	f.server.set(http.StatusOK, testkit.JWKS(testkit.NewSigner("k2")))
	f.clock.Advance(DefaultMaxAge - time.Second)
	if _, err := f.source.Key(ctx, "k1"); err != nil {
		t.Fatalf("before the max age: %v", err)
	}
	if n := f.server.hits.Load(); n != 1 {
		t.Fatalf("%d fetches before the max age, want 1", n)
	}
	f.clock.Advance(time.Second)
	if _, err := f.source.Key(ctx, "k1"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("a key removed by the backend is still served after the max age: %v", err)
	}
	if n := f.server.hits.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
}

func TestRemoteDownWithKeys(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	clk := testkit.NewClock(epoch)
	k := testkit.NewSigner("k1")
	srv := newJWKSServer(t, testkit.JWKS(k))
	src, err := NewRemoteKeySource(srv.URL, RemoteOptions{Now: clk.Now, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(src, VerifierOptions{Now: clk.Now, CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := v.Verify(ctx, k.Token(claimsAt(clk.Now())), ModeAccess); err != nil {
		t.Fatal(err)
	}
	for _, down := range []struct {
		name string
		set  func()
	}{
		{"error status", func() { srv.set(http.StatusServiceUnavailable, []byte("busy")) }},
		{"invalid set", func() { srv.set(http.StatusOK, []byte(`{"keys":`)) }},
		{"connection refused", srv.Close},
	} {
		down.set()
		clk.Advance(DefaultMaxAge)
		before := logs.Len()
		if _, err := v.Verify(ctx, k.Token(claimsAt(clk.Now())), ModeAccess); err != nil {
			t.Fatalf("%s: the last good set was not kept: %v", down.name, err)
		}
		if logs.Len() != before+1 {
			t.Fatalf("%s: the failed refresh was not reported", down.name)
		}
	}
	if n := srv.hits.Load(); n != 3 {
		t.Fatalf("%d fetches, want 3", n)
	}
}

func TestRemoteDownWithoutKeys(t *testing.T) {
	k := testkit.NewSigner("k1")
	for _, tt := range []struct {
		name   string
		status int
		body   string
	}{
		{"error status", http.StatusInternalServerError, ""},
		{"not found", http.StatusNotFound, `{"keys":[]}`},
		{"not JSON", http.StatusOK, "<html>"},
		{"no keys member", http.StatusOK, `{}`},
		{"too large", http.StatusOK, `{"keys":[],"pad":"` + strings.Repeat("a", maxJWKSSize) + `"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := testkit.NewClock(epoch)
			srv := newJWKSServer(t, []byte(tt.body))
			srv.set(tt.status, []byte(tt.body))
			src, err := NewRemoteKeySource(srv.URL, RemoteOptions{Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			v, err := NewVerifier(src, VerifierOptions{Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			token := k.Token(claimsAt(clk.Now()))
			for range 3 {
				if _, err := v.Verify(ctx, token, ModeAccess); !errors.Is(err, ErrKeysUnavailable) {
					t.Fatalf("err = %v, want ErrKeysUnavailable", err)
				}
			}
			if n := srv.hits.Load(); n != 1 {
				t.Fatalf("%d fetches within a second, want 1", n)
			}
			// Without any set, the next try comes after a second, not a cooldown.
			srv.set(http.StatusOK, testkit.JWKS(k))
			clk.Advance(emptyRetry)
			if _, err := v.Verify(ctx, token, ModeAccess); err != nil {
				t.Fatalf("after the backend recovered: %v", err)
			}
		})
	}
}

func TestRemoteConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	src, err := NewRemoteKeySource(url, RemoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Key(context.Background(), "k1"); !errors.Is(err, ErrKeysUnavailable) {
		t.Fatalf("err = %v, want ErrKeysUnavailable", err)
	}
}

func TestRemoteTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	src, err := NewRemoteKeySource(srv.URL, RemoteOptions{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Key(context.Background(), "k1")
	if !errors.Is(err, ErrKeysUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrKeysUnavailable after the deadline", err)
	}
}

func TestRemoteCallerContext(t *testing.T) {
	release := make(chan struct{})
	body := testkit.JWKS(testkit.NewSigner("k1"))
	var once sync.Once
	entered := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(entered) })
		<-release
		w.Write(body)
	}))
	defer srv.Close()
	src, err := NewRemoteKeySource(srv.URL, RemoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A caller that gives up does not cancel the fetch for the others.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := src.Key(ctx, "k1")
		done <- err
	}()
	<-entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	go func() {
		_, err := src.Key(context.Background(), "k1")
		done <- err
	}()
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the shared fetch was cancelled with its first caller: %v", err)
	}
}

func TestRemoteConcurrentMisses(t *testing.T) {
	k := testkit.NewSigner("k1")
	body := testkit.JWKS(k)
	release := make(chan struct{})
	entered := make(chan struct{}, 50)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		entered <- struct{}{}
		<-release
		w.Write(body)
	}))
	defer srv.Close()
	src, err := NewRemoteKeySource(srv.URL, RemoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Go(func() {
			_, err := src.Key(context.Background(), "k1")
			errs <- err
		})
	}
	<-entered
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d fetches for 50 concurrent lookups, want 1", n)
	}
}

func TestNewRemoteKeySource(t *testing.T) {
	for _, tt := range []struct {
		url  string
		opts RemoteOptions
	}{
		{"", RemoteOptions{}},
		{"/jwks.json", RemoteOptions{}},
		{"file:///etc/jwks.json", RemoteOptions{}},
		{"http://", RemoteOptions{}},
		{"http://127.0.0.1:9081/.well-known/jwks.json", RemoteOptions{Cooldown: -1}},
		{"http://127.0.0.1:9081/.well-known/jwks.json", RemoteOptions{MaxAge: -1}},
		{"http://127.0.0.1:9081/.well-known/jwks.json", RemoteOptions{Timeout: -1}},
	} {
		if _, err := NewRemoteKeySource(tt.url, tt.opts); err == nil {
			t.Errorf("NewRemoteKeySource(%q, %+v) accepted", tt.url, tt.opts)
		}
	}
	if _, err := NewRemoteKeySource("https://backend.internal/.well-known/jwks.json", RemoteOptions{}); err != nil {
		t.Fatal(err)
	}
}
