package edge

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/problem"
)

func TestFreshnessCheck(t *testing.T) {
	now := time.Unix(1_795_000_000, 0)
	cbc := &clientkey.Key{Kid: "k-cbc", Enc: jwe.EncA128CBCHS256}
	strict := &clientkey.Key{Kid: "k-strict", Enc: jwe.EncA128CBCHS256, RequireFresh: true}
	gcm := &clientkey.Key{Kid: "k-gcm", Enc: jwe.EncA256GCM}
	const jti = "a-request-id-0001"
	// The rows share one checker, so a row may replay an earlier one.
	f := newFreshness(FreshConfig{})
	f.now = func() time.Time { return now }
	for _, tt := range []struct {
		name string
		key  *clientkey.Key
		h    jwe.Header
		want string // the problem's code, "" for none
		fwd  bool   // the jti is handed to the backend
	}{
		{"cbc without", cbc, jwe.Header{}, "", false},
		{"cbc with", cbc, jwe.Header{Iat: now.Unix(), Jti: jti}, "", true},
		{"cbc stale", cbc, jwe.Header{Iat: now.Unix() - 301, Jti: jti}, problem.CodeStaleRequest, false},
		{"strict without", strict, jwe.Header{}, problem.CodeFreshnessRequired, false},
		{"gcm without", gcm, jwe.Header{}, problem.CodeFreshnessRequired, false},
		{"gcm iat alone", gcm, jwe.Header{Iat: now.Unix()}, problem.CodeFreshnessRequired, false},
		{"gcm jti alone", gcm, jwe.Header{Jti: jti}, problem.CodeFreshnessRequired, false},
		{"gcm short jti", gcm, jwe.Header{Iat: now.Unix(), Jti: "short"}, problem.CodeFreshnessRequired, false},
		{"gcm jti with a space", gcm, jwe.Header{Iat: now.Unix(), Jti: "a request id 0001"}, problem.CodeFreshnessRequired, false},
		{"gcm at the window's edge", gcm, jwe.Header{Iat: now.Unix() + 300, Jti: jti}, "", true},
		{"gcm future", gcm, jwe.Header{Iat: now.Unix() + 301, Jti: jti + "-2"}, problem.CodeStaleRequest, false},
		{"gcm replayed", gcm, jwe.Header{Iat: now.Unix(), Jti: jti}, problem.CodeReplayedRequest, false},
		{"another key, same jti", strict, jwe.Header{Iat: now.Unix(), Jti: jti}, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fwd, p := f.Check(tt.key, tt.h)
			if got := ""; p != nil {
				got = p.Code
				if got != tt.want {
					t.Fatalf("check = %s, want %q", got, tt.want)
				}
			} else if tt.want != "" {
				t.Fatalf("check passed, want %s", tt.want)
			}
			if (fwd != nil) != tt.fwd {
				t.Fatalf("headers handed on: %v", fwd)
			}
			if fwd != nil && (fwd.Get(contract.HeaderJTI) != tt.h.Jti ||
				fwd.Get(contract.HeaderJTIExpires) != strconv.FormatInt(tt.h.Iat+300, 10)) {
				t.Fatalf("headers handed on: %v", fwd)
			}
		})
	}
}

// TestFreshnessConcurrentReplays sends one envelope's header from many
// goroutines at once, as a client replaying a request in parallel would:
// exactly one gets through the edge's memory.
func TestFreshnessConcurrentReplays(t *testing.T) {
	key := &clientkey.Key{Kid: "k-gcm", Enc: jwe.EncA256GCM}
	for round := range 50 {
		f := newFreshness(FreshConfig{})
		h := jwe.Header{Iat: time.Now().Unix(), Jti: "a-request-id-" + strconv.Itoa(10000+round)}
		var passed atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				if _, p := f.Check(key, h); p == nil {
					passed.Add(1)
				}
			})
		}
		wg.Wait()
		if n := passed.Load(); n != 1 {
			t.Fatalf("round %d: %d of 16 passed, want 1", round, n)
		}
	}
}
