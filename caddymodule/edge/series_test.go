package edge

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// TestSeriesCache checks that the series kept for a kid and for a route's
// durations are the vectors' own: what they count is what the vectors
// export.
func TestSeriesCache(t *testing.T) {
	m := newMetrics()
	for _, tc := range []struct {
		name string
		move func()
		read func() float64
		want float64
	}{
		{"accepted", func() { m.ForKid("k-series").Accepted.Inc() },
			func() float64 { return testutil.ToFloat64(m.JWERequests.WithLabelValues("k-series", "ok")) }, 2},
		{"decrypted bytes", func() { m.ForKid("k-series").DecryptedBytes.Add(10) },
			func() float64 { return testutil.ToFloat64(m.jweDecryptedBytes.WithLabelValues("k-series")) }, 20},
		{"encrypted", func() { m.ForKid("k-series").Encrypted.Inc() },
			func() float64 { return testutil.ToFloat64(m.JWEEncryptedResponses.WithLabelValues("k-series", "ok")) }, 2},
		{"token hits", func() { m.tokenHits.Inc() },
			func() float64 { return testutil.ToFloat64(m.tokenCache.WithLabelValues("hit")) }, 2},
		{"durations", func() { m.Duration("/v1/records", "GET", 200).Observe(0.1) },
			func() float64 { return sampleCount(t, m.requestDuration.WithLabelValues("/v1/records", "GET", "200")) }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.move()
			tc.move()
			if got := tc.read(); got != tc.want {
				t.Errorf("the vector reads %v, want %v", got, tc.want)
			}
		})
	}
	if m.ForKid("a") == m.ForKid("b") || m.ForKid("a") != m.ForKid("a") {
		t.Error("ForKid must keep one set of series per kid")
	}
}

// sampleCount is the number of observations of a histogram's series.
func sampleCount(t *testing.T, o prometheus.Observer) float64 {
	t.Helper()
	var pb dto.Metric
	if err := o.(prometheus.Metric).Write(&pb); err != nil {
		t.Fatal(err)
	}
	return float64(pb.GetHistogram().GetSampleCount())
}
