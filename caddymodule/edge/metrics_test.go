package edge

import (
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricsAtStart: before any request, the edge exports its build and
// both results of the token cache, and no key feed's gauges, which only a
// key feed sets (an edge that reads a registry file has none).
func TestMetricsAtStart(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := newMetrics().register(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	var build prometheus.Labels
	for _, f := range families {
		series[f.GetName()] = len(f.GetMetric())
		if f.GetName() == "hdc_edge_build_info" && len(f.GetMetric()) == 1 {
			m := f.GetMetric()[0]
			build = prometheus.Labels{}
			for _, l := range m.GetLabel() {
				build[l.GetName()] = l.GetValue()
			}
			if v := m.GetGauge().GetValue(); v != 1 {
				t.Errorf("hdc_edge_build_info is %v", v)
			}
		}
	}
	tests := []struct {
		name   string
		series int
	}{
		{"hdc_edge_build_info", 1},
		{"hdc_edge_token_cache_lookups_total", 2},
		{"hdc_edge_key_feed_up", 0},
		{"hdc_edge_key_feed_applied_sequence", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if series[tt.name] != tt.series {
				t.Fatalf("%d series, want %d", series[tt.name], tt.series)
			}
		})
	}
	if want := buildInfoLabels(); !maps.Equal(build, want) {
		t.Errorf("hdc_edge_build_info's labels are %v, want %v", build, want)
	}
}
