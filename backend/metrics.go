package backend

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/version"
)

// readyTimeout bounds the store's ping of a scrape (hdc_backend_ready).
const readyTimeout = 2 * time.Second

// registerMetrics registers the metrics of the server itself, as opposed
// to those of a service it wires: its build, its readiness, the
// database's pool, the audit checkpoints' last success.
func (s *Server) registerMetrics(reg prometheus.Registerer) error {
	return metrics.Register(reg, buildInfo(),
		prometheus.NewGaugeFunc(metrics.Gauge("ready",
			"1 while the backend can serve (its database answers, a signing key is loaded), as GET /readyz answers 200; else 0."),
			s.readiness),
		newPoolCollector(s.store.PoolStats),
		prometheus.NewGaugeFunc(metrics.Gauge("audit_checkpoint_last_success_timestamp_seconds",
			"Unix time of the audit checkpoint job's last successful run, which wrote the trails' heads or found them unchanged; 0 before the first."),
			func() float64 { return unixSeconds(s.checkpoints.LastSuccess()) }),
		prometheus.NewGaugeFunc(metrics.Gauge("audit_checkpoint_interval_seconds",
			"How often the audit checkpoint job runs (HDC_AUDIT_CHECKPOINT_INTERVAL)."),
			func() float64 { return s.cfg.AuditCheckpointInterval.Seconds() }),
	)
}

// buildInfo is hdc_backend_build_info: 1, labelled with what the backend
// was built from, as hdc-backend --version and GET /healthz name it.
func buildInfo() prometheus.Gauge {
	v := version.Get()
	opts := metrics.Gauge("build_info", "1, labelled with what the backend was built from: module version, VCS revision, Go version.")
	opts.ConstLabels = prometheus.Labels{"version": v.Version, "revision": v.Revision, "goversion": v.Go}
	g := prometheus.NewGauge(opts)
	g.Set(1)
	return g
}

// readiness is 1 when the backend is ready, else 0, asked within
// readyTimeout.
func (s *Server) readiness() float64 {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if s.isReady(ctx) {
		return 1
	}
	return 0
}

// unixSeconds is t in Unix seconds, 0 for the zero time.
func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

// poolCollector reads the figures of the store's pool of database
// connections at each scrape, the same for either engine.
type poolCollector struct {
	stats                       func() store.PoolStats
	max, conns, waits, waitTime *prometheus.Desc
}

func newPoolCollector(stats func() store.PoolStats) *poolCollector {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(metrics.Name(name), help, labels, nil)
	}
	return &poolCollector{
		stats:    stats,
		max:      desc("db_max_connections", "The most connections the pool of database connections opens; 0 for no bound (SQLite's)."),
		conns:    desc("db_connections", "Open connections to the database by state: in_use (serving a caller) or idle.", "state"),
		waits:    desc("db_waits_total", "Callers that waited for a database connection to be free or made."),
		waitTime: desc("db_wait_seconds_total", "Time callers waited for a database connection, in all."),
	}
}

// Describe implements prometheus.Collector.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.max, c.conns, c.waits, c.waitTime} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.stats()
	ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(st.Max))
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(st.InUse), "in_use")
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(st.Idle), "idle")
	ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, float64(st.Waits))
	ch <- prometheus.MustNewConstMetric(c.waitTime, prometheus.CounterValue, st.WaitTime.Seconds())
}
