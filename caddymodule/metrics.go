package caddymodule

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// The edge's metrics. The vectors live for the whole process, so counts
// survive config reloads; each new config registers them in its own registry
// (Caddy makes one per config), as caddy-ratelimit does.
var (
	jweRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "hdc", Subsystem: "edge", Name: "jwe_requests_total",
		Help: "Encrypted requests by kid (\"unknown\" when not in the registry) and result.",
	}, []string{"kid", "result"})
	jweDecryptedBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "hdc", Subsystem: "edge", Name: "jwe_decrypted_bytes_total",
		Help: "Plaintext bytes of decrypted request bodies, by kid.",
	}, []string{"kid"})
	jweEncryptedResponses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "hdc", Subsystem: "edge", Name: "jwe_encrypted_responses_total",
		Help: "Responses encrypted by the edge, by kid and result (ok, too_large).",
	}, []string{"kid", "result"})
	keyLastUsed = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "hdc", Subsystem: "edge", Name: "key_last_used_timestamp_seconds",
		Help: "Unix time of the last request that used each kid; a retiring key whose value stops moving can be retired.",
	}, []string{"kid"})
	authRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "hdc", Subsystem: "edge", Name: "auth_requests_total",
		Help: "Bearer token checks by mode and result.",
	}, []string{"mode", "result"})
	registryReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "hdc", Subsystem: "edge", Name: "key_registry_reloads_total",
		Help: "Reloads of the key registry file by result (changed, unchanged, rejected).",
	}, []string{"result"})
	registryKeys = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "hdc", Subsystem: "edge", Name: "key_registry_keys",
		Help: "Keys in the loaded registry, by status.",
	}, []string{"status"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "hdc", Subsystem: "edge", Name: "request_duration_seconds",
		Help:    "Time the edge took to answer API requests, by route (the API path template), method and status code.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route", "method", "code"})
	framingRefusals = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "hdc", Subsystem: "edge", Name: "ambiguous_framing_refusals_total",
		Help: "HTTP/1.x requests refused for carrying both Content-Length and Transfer-Encoding.",
	})
)

// registerMetrics adds the edge's metrics to a config's registry. A
// collector already there (a second app in one config cannot happen, but a
// registry shared with another process-wide user could) is not an error.
func registerMetrics(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		jweRequests, jweDecryptedBytes, jweEncryptedResponses, keyLastUsed,
		authRequests, registryReloads, registryKeys, requestDuration, framingRefusals,
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
