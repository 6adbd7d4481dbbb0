package edge

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// The series every accepted request moves are looked up once and kept: a
// vector's look-up by label values checks that each value is UTF-8 and
// hashes them every time, about a thousand instructions a look-up, and a
// request made seven.

// KidSeries are the series of one kid that its accepted requests move.
type KidSeries struct {
	Accepted       prometheus.Counter // jwe_requests_total{result="ok"}
	DecryptedBytes prometheus.Counter
	LastUsed       prometheus.Gauge
	Encrypted      prometheus.Counter // jwe_encrypted_responses_total{result="ok"}
}

// durationKey names a series of hdc_edge_request_duration_seconds.
type durationKey struct {
	route, method string
	code          int
}

// seriesCache holds the series looked up so far. Its keys are bounded:
// kids of keys that decrypted a request, and the API's routes, methods and
// statuses.
type seriesCache struct {
	kids      sync.Map // kid → *KidSeries
	durations sync.Map // durationKey → prometheus.Observer
}

// ForKid returns the series of the kid, a key's that decrypted a request.
func (m *MetricSet) ForKid(kid string) *KidSeries {
	if s, ok := m.series.kids.Load(kid); ok {
		return s.(*KidSeries)
	}
	s, _ := m.series.kids.LoadOrStore(kid, &KidSeries{
		Accepted:       m.JWERequests.WithLabelValues(kid, "ok"),
		DecryptedBytes: m.jweDecryptedBytes.WithLabelValues(kid),
		LastUsed:       m.keyLastUsed.WithLabelValues(kid),
		Encrypted:      m.JWEEncryptedResponses.WithLabelValues(kid, "ok"),
	})
	return s.(*KidSeries)
}

// Duration returns the series of hdc_edge_request_duration_seconds of a
// route (an API path template), method and status, for hdc_auth.
func (m *MetricSet) Duration(route, method string, code int) prometheus.Observer {
	k := durationKey{route, method, code}
	if o, ok := m.series.durations.Load(k); ok {
		return o.(prometheus.Observer)
	}
	o, _ := m.series.durations.LoadOrStore(k, m.requestDuration.WithLabelValues(route, method, strconv.Itoa(code)))
	return o.(prometheus.Observer)
}
