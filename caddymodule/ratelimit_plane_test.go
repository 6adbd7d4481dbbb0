package caddymodule

import (
	"net/http"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestRateLimitOverrideFromPlane: the reference Caddyfile, its keys and
// the clients' limits from the key plane. A client's override of the
// writes' rate reaches the edge through the feed within a second and is
// enforced (429, its policy in the fields); another client keeps the
// default; the override removed, the default applies again.
func TestRateLimitOverrideFromPlane(t *testing.T) {
	e := startEdge(t, edgetest.Keys, map[string]string{"HDC_KEY_REGISTRY": "", "HDC_LOG_LEVEL": "error",
		"HDC_RATELIMIT_REDIS": "", "HDC_RATELIMIT_WRITES": "1000", "HDC_RATELIMIT_WRITES_BURST": "1000"})
	send := func(client string) *http.Response {
		kid := "k-" + client
		resp, _ := e.call(t, "POST", subscriptions, jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf(kid)), jwe.Protected{Kid: kid}, []byte(`{"n":1}`)),
			encHeaders(e.token(client, nil)))
		return resp
	}
	policy := func(client string) string { return send(client).Header.Get("RateLimit-Policy") }
	if got := policy("c1"); got != `"writes";q=1000;w=1` {
		t.Fatalf("the default's policy: %q", got)
	}
	changed := time.Now()
	e.plane.SetLimits("c1", &contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassWrites: {PerSecond: 1, Burst: 1}}})
	testkit.Eventually(t, time.Second, "the override to reach the edge", func() bool { return policy("c1") == `"writes";q=1;w=1` })
	t.Logf("the override applied %v after the change", time.Since(changed).Round(time.Millisecond))
	if got := send("c1"); got.StatusCode != http.StatusTooManyRequests || got.Header.Get("Retry-After") == "" {
		t.Fatalf("c1 over its override: %d, Retry-After %q", got.StatusCode, got.Header.Get("Retry-After"))
	}
	if got := send("c2"); got.StatusCode != http.StatusOK || got.Header.Get("RateLimit-Policy") != `"writes";q=1000;w=1` {
		t.Fatalf("c2, the default: %d %q", got.StatusCode, got.Header.Get("RateLimit-Policy"))
	}
	e.plane.SetLimits("c1", nil)
	testkit.Eventually(t, time.Second, "the removal to reach the edge", func() bool { return policy("c1") == `"writes";q=1000;w=1` })
}
