package scale

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestUnknownKidFloodStarvesNoOne (third review, finding 1): while one
// address sends envelopes under random kids to the public login route,
// over 1,000 a second for 10 s without any credential, ten keys added
// meanwhile each work through the edge from another address, at the first
// attempt once the edge has the change that added it, within a second of
// hdc keys add returning; and the backend is asked for no more kids than
// the edge's kid filter lets through by mistake.
func TestUnknownKidFloodStarvesNoOne(t *testing.T) {
	const floodFor, workers = 10 * time.Second, 16
	s := hdctest.StartStack(t)
	c := s.NewClient("kid-flood")
	scrape := func(series string) int {
		return hdctest.ScrapeMetric(s.InternalClient(pki.Scraper), s.Internal+contract.PathMetrics, series)
	}
	edgeMetric := func(series string) int { return max(hdctest.ScrapeMetric(s.HTTP, s.Metrics+"/metrics", series), 0) }
	askedBefore := max(scrape(`hdc_backend_key_lookups_total{result="unknown"}`), 0)

	ctx, stop := context.WithCancel(t.Context())
	var sent, refused atomic.Int64
	var wg sync.WaitGroup
	started := time.Now()
	for range workers {
		wg.Go(func() { flood(ctx, s.Edge, &sent, &refused) })
	}
	// From 127.0.0.2, the other address.
	other := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	var slowest time.Duration
	for i := range 10 {
		var k struct{ Kid, Secret string }
		s.HDC(&k, "keys", "add", "--client", c.ID)
		added, seq := time.Now(), hdctest.KeySeq(t, s, k.Kid)
		key := *c
		key.Kid, key.Key = k.Kid, k.Secret
		s.WaitFor("the edge to apply the key's change", func() bool { return edgeMetric("hdc_edge_key_feed_applied_sequence") >= seq })
		if status := login(t, other, s.Edge, &key, c); status != http.StatusOK || time.Since(added) > time.Second {
			t.Fatalf("key %d of 10 (%s), %v after it was added: %d", i+1, k.Kid, time.Since(added), status)
		}
		slowest = max(slowest, time.Since(added))
	}
	<-time.After(time.Until(started.Add(floodFor))) // the flood's whole length
	stop()
	wg.Wait()
	elapsed := time.Since(started)
	rate := float64(sent.Load()) / elapsed.Seconds()
	asked := max(scrape(`hdc_backend_key_lookups_total{result="unknown"}`), 0) - askedBefore
	t.Logf("%d random-kid envelopes in %v (%.0f a second), %d refused (400, or 503 once the source's look-ups were spent); 10 of 10 new keys worked from another address, the slowest %v after hdc keys add returned; the backend was asked for %d unknown kids (edge: %d filtered)",
		sent.Load(), elapsed.Round(time.Millisecond), rate, refused.Load(), slowest.Round(time.Millisecond), asked, edgeMetric(`hdc_edge_key_lookups_total{result="filtered"}`))
	if rate < 1000 {
		t.Fatalf("the flood ran at %.0f a second, under the 1,000 the review sent", rate)
	}
	if refused.Load() != sent.Load() {
		t.Fatalf("%d of %d flood requests were not refused 400 or 503 key_lookups_busy", sent.Load()-refused.Load(), sent.Load())
	}
	if limit := int(0.01 * float64(sent.Load())); asked > limit {
		t.Fatalf("the backend was asked for %d unknown kids, over the filter's 1%% of %d", asked, sent.Load())
	}
}

// flood sends encrypted logins under random kids to the edge at base until
// ctx is done, counting those sent and those refused (refusedUniformly).
func flood(ctx context.Context, base string, sent, refused *atomic.Int64) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	junk := make([]byte, 48)
	for ctx.Err() == nil {
		kid := make([]byte, 12)
		rand.Read(kid)
		rand.Read(junk)
		protected := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"dir","enc":"A128CBC-HS256","kid":"k_` + base64.RawURLEncoding.EncodeToString(kid) + `"}`))
		b64 := base64.RawURLEncoding.EncodeToString
		body := fmt.Sprintf(`{"protected":%q,"iv":%q,"ciphertext":%q,"tag":%q}`, protected, b64(junk[:16]), b64(junk[16:32]), b64(junk[32:]))
		req, err := http.NewRequestWithContext(ctx, "POST", base+hdctest.LoginPath, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(hdctest.JWEHeader, "JWE")
		resp, err := client.Do(req)
		if err != nil {
			continue // the flood's end cancels requests in flight
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		sent.Add(1)
		if refusedUniformly(resp) {
			refused.Add(1)
		}
	}
}

// login sends an encrypted login as owner, sealed by go-jose under key, to
// the edge at base, and returns the status.
func login(t *testing.T, client *http.Client, base string, key, owner *hdctest.APIClient) int {
	t.Helper()
	body := hdctest.GoJoseSeal(t, key, hdctest.LoginBody(owner))
	req, err := http.NewRequest("POST", base+hdctest.LoginPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/jose")
	req.Header.Set(hdctest.JWEHeader, "JWE")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// refusedUniformly reports whether resp is the answer to a kid the edge
// does not hold: invalid_encryption (400), or, once the source has spent
// its look-ups, key_lookups_busy (503 with Retry-After) for every kid it
// does not hold in memory, existing or not (one answer either way).
func refusedUniformly(resp *http.Response) bool {
	return resp.StatusCode == http.StatusBadRequest ||
		resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != ""
}
