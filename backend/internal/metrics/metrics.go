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
