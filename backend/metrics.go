package backend

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/health-data-connect/hdc/backend/internal/metrics"
)

// registerMetrics registers the metrics of the server itself, as opposed
// to those of a service it wires: the audit checkpoints' last success.
func (s *Server) registerMetrics(reg prometheus.Registerer) error {
	return metrics.Register(reg,
		prometheus.NewGaugeFunc(metrics.Gauge("audit_checkpoint_last_success_timestamp_seconds",
			"Unix time of the audit checkpoint job's last successful run, which wrote the trails' heads or found them unchanged; 0 before the first."),
			func() float64 { return unixSeconds(s.checkpoints.LastSuccess()) }),
		prometheus.NewGaugeFunc(metrics.Gauge("audit_checkpoint_interval_seconds",
			"How often the audit checkpoint job runs (HDC_AUDIT_CHECKPOINT_INTERVAL)."),
			func() float64 { return s.cfg.AuditCheckpointInterval.Seconds() }),
	)
}

// unixSeconds is t in Unix seconds, 0 for the zero time.
func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
