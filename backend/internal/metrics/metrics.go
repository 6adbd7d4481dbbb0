// Package metrics holds what the backend's packages share about their
// Prometheus metrics.
package metrics

import "github.com/prometheus/client_golang/prometheus"

// Register registers every collector with reg, stopping at the first error.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// The namespace and subsystem of every metric of the backend, whose full
// names are hdc_backend_<name>.
const (
	Namespace = "hdc"
	Subsystem = "backend"
)

// Counter returns the options of the backend's counter name.
func Counter(name, help string) prometheus.CounterOpts {
	return prometheus.CounterOpts{Namespace: Namespace, Subsystem: Subsystem, Name: name, Help: help}
}

// Gauge returns the options of the backend's gauge name.
func Gauge(name, help string) prometheus.GaugeOpts {
	return prometheus.GaugeOpts{Namespace: Namespace, Subsystem: Subsystem, Name: name, Help: help}
}

// Histogram returns the options of the backend's histogram name.
func Histogram(name, help string, buckets []float64) prometheus.HistogramOpts {
	return prometheus.HistogramOpts{Namespace: Namespace, Subsystem: Subsystem, Name: name, Help: help, Buckets: buckets}
}

// Name returns the full name of the backend's metric name, for a
// collector's own descriptions.
func Name(name string) string { return prometheus.BuildFQName(Namespace, Subsystem, name) }
