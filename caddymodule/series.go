package caddymodule

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// The series every accepted request moves are looked up once and kept: a
// vector's look-up by label values checks that each value is UTF-8 and
// hashes them every time, about a thousand instructions a look-up, and a
// request made seven.

// kidSeries are the series of one kid that its accepted requests move.
type kidSeries struct {
	accepted       prometheus.Counter // jwe_requests_total{result="ok"}
	decryptedBytes prometheus.Counter
	lastUsed       prometheus.Gauge
	encrypted      prometheus.Counter // jwe_encrypted_responses_total{result="ok"}
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
	kids      sync.Map // kid → *kidSeries
	durations sync.Map // durationKey → prometheus.Observer
}

// forKid returns the series of the kid, a key's that decrypted a request.
func (m *edgeMetrics) forKid(kid string) *kidSeries {
	if s, ok := m.series.kids.Load(kid); ok {
		return s.(*kidSeries)
	}
	s, _ := m.series.kids.LoadOrStore(kid, &kidSeries{
		accepted:       m.jweRequests.WithLabelValues(kid, "ok"),
		decryptedBytes: m.jweDecryptedBytes.WithLabelValues(kid),
		lastUsed:       m.keyLastUsed.WithLabelValues(kid),
		encrypted:      m.jweEncryptedResponses.WithLabelValues(kid, "ok"),
	})
	return s.(*kidSeries)
}

// duration returns the series of hdc_edge_request_duration_seconds of a
// route (an API path template), method and status.
func (m *edgeMetrics) duration(route, method string, code int) prometheus.Observer {
	k := durationKey{route, method, code}
	if o, ok := m.series.durations.Load(k); ok {
		return o.(prometheus.Observer)
	}
	o, _ := m.series.durations.LoadOrStore(k, m.requestDuration.WithLabelValues(route, method, strconv.Itoa(code)))
	return o.(prometheus.Observer)
}
