package scale

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestKeyPlane runs the stack as the reference deployment does, the keys
// in the backend's database and the edge looking them up over the hop:
// a registry file moved in with hdc keys import keeps working for its
// client; rotations and retirements reach the edge within a second (their
// times are logged, from the command's return to the edge's answer); and
// a flood of random kids is refused at the edge, costing the backend a
// bounded number of look-ups while a known client is served.
func TestKeyPlane(t *testing.T) {
	s := hdctest.StartStack(t)

	t.Run("ImportKeepsClientsWorking", func(t *testing.T) {
		c := s.NewClient("key-plane-import")
		reg := filepath.Join(t.TempDir(), "keys.json")
		var k struct{ Kid, Secret string }
		s.HDC(&k, "keys", "add", "--client", c.ID, "--registry", reg)
		var imported struct{ Keys int }
		s.HDC(&imported, "keys", "import", reg)
		if imported.Keys != 1 {
			t.Fatalf("imported %d keys", imported.Keys)
		}
		moved := *c
		moved.Kid, moved.Key = k.Kid, k.Secret
		s.WaitForKey(moved.Kid)
		s.Login(&moved, true, "") // fails the test unless it logs in
	})

	t.Run("ChangesReachTheEdgeWithinASecond", func(t *testing.T) {
		c := s.NewClient("key-plane-changes")
		tk := s.Login(c, true, "")
		var rotations, retirements []time.Duration
		for range 10 {
			var k struct{ Kid, Secret string }
			s.HDC(&k, "keys", "rotate", "--client", c.ID)
			start := time.Now()
			next := *c
			next.Kid, next.Key = k.Kid, k.Secret
			testkit.Eventually(t, 10*time.Second, "the edge to accept the new key", func() bool { return s.KidStatus(&next, tk) == http.StatusOK })
			rotations = append(rotations, time.Since(start))

			s.HDC(nil, "keys", "retire", "--kid", c.Kid)
			start = time.Now()
			testkit.Eventually(t, 10*time.Second, "the edge to refuse the retired key", func() bool { return s.KidStatus(c, tk) == http.StatusBadRequest })
			retirements = append(retirements, time.Since(start))
			c = &next
		}
		t.Logf("from hdc keys rotate returning to the edge accepting the new key: %s", quantiles(rotations))
		t.Logf("from hdc keys retire returning to the edge refusing the key: %s", quantiles(retirements))
		if worst := slices.Max(retirements); worst > time.Second {
			t.Errorf("a retirement took %v to reach the edge, more than a second", worst)
		}
	})

	t.Run("UnknownKidsCostBoundedLookups", func(t *testing.T) {
		c := s.NewClient("key-plane-flood")
		tk := s.Login(c, true, "")
		lookups := func() int {
			return hdctest.ScrapeMetric(s.InternalClient(pki.Scraper), s.Internal+contract.PathMetrics, `hdc_backend_key_lookups_total{result="unknown"}`)
		}
		before := lookups()
		const flood = 2000
		start := time.Now()
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := range flood / 8 {
					random := *c
					random.Kid = fmt.Sprintf("random-%d-%d", w, i)
					// 400, or 503 once this source's look-ups are spent
					// (the answer for every kid not held, existing or not).
					if got := s.KidStatus(&random, tk); got != http.StatusBadRequest && got != http.StatusServiceUnavailable {
						t.Errorf("a random kid: %d", got)
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		caused := lookups() - before
		// The edge's default: 100 look-ups a second, a burst of 200.
		if limit := 200 + int(100*elapsed.Seconds()) + 10; caused > limit {
			t.Errorf("%d random kids in %v caused %d look-ups in the backend, over the edge's limit %d", flood, elapsed, caused, limit)
		}
		if got := s.KidStatus(c, tk); got != http.StatusOK {
			t.Fatalf("the known client after the flood: %d", got)
		}
		t.Logf("%d requests with random kids in %v caused %d look-ups in the backend", flood, elapsed.Round(time.Millisecond), caused)
	})
}

// quantiles describes durations by their median, 99th percentile and
// maximum, to a tenth of a millisecond.
func quantiles(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	const unit = 100 * time.Microsecond
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))].Round(unit) }
	return fmt.Sprintf("p50 %v, p99 %v, max %v over %d", at(0.5), at(0.99), s[len(s)-1].Round(unit), len(s))
}
