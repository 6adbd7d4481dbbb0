package edge

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/version"
)

// The namespace and subsystem of the edge's metrics: hdc_edge_*.
const (
	metricsNS  = "hdc"
	metricsSub = "edge"
)

// MetricSet is the edge's metrics: the handlers move the exported ones,
// the hdc app the others. They live for the whole process (Metrics), so
// counts survive config reloads; each new config registers them in its own
// registry (Caddy makes one per config), as caddy-ratelimit does.
type MetricSet struct {
	// JWERequests counts hdc_jwe's requests by kid and result.
	JWERequests *prometheus.CounterVec
	// JWEEncryptedResponses counts hdc_jwe's answers by kid and result.
	JWEEncryptedResponses *prometheus.CounterVec
	// AuthRequests counts hdc_auth's checks by mode and result.
	AuthRequests *prometheus.CounterVec
	// FramingRefusals counts hdc_framing's refusals.
	FramingRefusals prometheus.Counter
	// RateLimited counts the requests hdc_ratelimit refused, by route
	// class and reason (rate, quota); no client id: the log names it.
	RateLimited *prometheus.CounterVec

	jweDecryptedBytes *prometheus.CounterVec
	keyLastUsed       *prometheus.GaugeVec
	registryReloads   *prometheus.CounterVec
	registryKeys      *prometheus.GaugeVec
	requestDuration   *prometheus.HistogramVec
	keyLookups        *prometheus.CounterVec
	// keyFeedUp and keyFeedApplied have no labels: vectors only so that
	// they are exported once a key feed reports, and never by an edge
	// that reads a registry file.
	keyFeedUp      *prometheus.GaugeVec
	keyFeedApplied *prometheus.GaugeVec
	tokenCache     *prometheus.CounterVec
	buildInfo      prometheus.Gauge
	// rateLimitShared has no labels, a vector only so that an edge
	// without Redis never exports it.
	rateLimitShared *prometheus.GaugeVec

	tokenHits, tokenMisses prometheus.Counter // tokenCache's two series
	series                 seriesCache
}

// Metrics are the edge's metrics.
var Metrics = newMetrics()

func newMetrics() *MetricSet {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metricsNS, Subsystem: metricsSub, Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: metricsNS, Subsystem: metricsSub, Name: name, Help: help}, labels)
	}
	m := &MetricSet{
		JWERequests: counter("jwe_requests_total",
			"Encrypted requests by kid (\"unknown\" when not in the registry) and result.", "kid", "result"),
		jweDecryptedBytes: counter("jwe_decrypted_bytes_total", "Plaintext bytes of decrypted request bodies, by kid.", "kid"),
		JWEEncryptedResponses: counter("jwe_encrypted_responses_total",
			"Responses encrypted by the edge, by kid and result (ok, too_large).", "kid", "result"),
		keyLastUsed: gauge("key_last_used_timestamp_seconds",
			"Unix time of the last request that used each kid; a retiring key whose value stops moving can be retired.", "kid"),
		AuthRequests: counter("auth_requests_total", "Bearer token checks by mode and result.", "mode", "result"),
		registryReloads: counter("key_registry_reloads_total",
			"Reloads of the key registry file by result (changed, unchanged, rejected).", "result"),
		registryKeys: gauge("key_registry_keys", "Keys in the loaded registry, by status.", "status"),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metricsNS, Subsystem: metricsSub, Name: "request_duration_seconds",
			Help:    "Time the edge took to answer API requests, by route (the API path template), method and status code.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method", "code"}),
		FramingRefusals: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metricsNS, Subsystem: metricsSub, Name: "ambiguous_framing_refusals_total",
			Help: "HTTP/1.x requests refused for carrying both Content-Length and Transfer-Encoding.",
		}),
		keyLookups: counter("key_lookups_total",
			"Look-ups of kids by result: in the backend's key plane, found, unknown, failed; not made, cached, remembered (unknown), filtered, limited (over the rate).", "result"),
		keyFeedUp: gauge("key_feed_up", "1 while the backend's key feed answers, 0 while it does not (the edge keeps its cached keys)."),
		keyFeedApplied: gauge("key_feed_applied_sequence",
			"The number of the last key plane change this edge applied; behind the backend's hdc_backend_key_plane_sequence by the feed's lag."),
		tokenCache: counter("token_cache_lookups_total",
			"Access tokens looked up in the cache of verified tokens, by result: hit (not verified again) or miss.", "result"),
		RateLimited: counter("rate_limited_requests_total",
			"Requests refused 429 over a client's limits, by route class (login, reads, writes, uploads) and reason (rate, quota).", "class", "reason"),
		rateLimitShared: gauge("rate_limit_shared",
			"1 while this edge counts rate limits in Redis with the fleet, 0 while Redis does not answer and it counts alone at its share of each limit."),
		buildInfo: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: metricsNS, Subsystem: metricsSub, Name: "build_info",
			Help: "1, labelled with what the edge was built from: module version, VCS revision, Go version.", ConstLabels: buildInfoLabels()}),
	}
	m.tokenHits, m.tokenMisses = m.tokenCache.WithLabelValues("hit"), m.tokenCache.WithLabelValues("miss")
	for _, class := range contract.RouteClasses { // every series at 0 from the start, for rate() and the alerts
		m.RateLimited.WithLabelValues(string(class), "rate")
	}
	m.RateLimited.WithLabelValues(string(contract.ClassUploads), "quota")
	m.buildInfo.Set(1)
	return m
}

// buildInfoLabels are the labels of hdc_edge_build_info: what the binary
// was built from, as hdc-edge version names it.
func buildInfoLabels() prometheus.Labels {
	v := version.Get()
	return prometheus.Labels{"version": v.Version, "revision": v.Revision, "goversion": v.Go}
}

// register adds the edge's metrics to a config's registry. A collector
// already there (a second app in one config cannot happen, but a registry
// shared with another process-wide user could) is not an error.
func (m *MetricSet) register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		m.JWERequests, m.jweDecryptedBytes, m.JWEEncryptedResponses, m.keyLastUsed,
		m.AuthRequests, m.registryReloads, m.registryKeys, m.requestDuration, m.FramingRefusals,
		m.keyLookups, m.keyFeedUp, m.keyFeedApplied, m.tokenCache, m.buildInfo, m.RateLimited, m.rateLimitShared,
	} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return err
			}
		}
	}
	return nil
}
