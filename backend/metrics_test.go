package backend

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestServerMetrics: the server's own metrics read what they describe
// once it serves.
func TestServerMetrics(t *testing.T) {
	h := start(t, nil)
	// The checkpoint job runs when Serve starts.
	testkit.Eventually(t, 10*time.Second, "the first audit checkpoint", func() bool {
		v, _ := h.metric("hdc_backend_audit_checkpoint_last_success_timestamp_seconds")
		return v > 0
	})
	now := float64(time.Now().Unix())
	tests := []struct {
		series string
		ok     func(float64) bool
	}{
		{"hdc_backend_audit_checkpoint_last_success_timestamp_seconds", func(v float64) bool { return v > now-60 && v <= now+1 }},
		{"hdc_backend_audit_checkpoint_interval_seconds", func(v float64) bool { return v == h.cfg.AuditCheckpointInterval.Seconds() }},
		{"hdc_backend_db_max_connections", func(v float64) bool { return v == 0 }},           // SQLite's pool has no bound
		{`hdc_backend_db_connections{state="idle"}`, func(v float64) bool { return v >= 0 }}, // the scrape may hold the one there is
		{`hdc_backend_db_connections{state="in_use"}`, func(v float64) bool { return v >= 0 }},
		{"hdc_backend_db_waits_total", func(v float64) bool { return v >= 0 }},
		{"hdc_backend_db_wait_seconds_total", func(v float64) bool { return v >= 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.series, func(t *testing.T) {
			if v, ok := h.metric(tt.series); !ok || !tt.ok(v) {
				t.Fatalf("%s is %v (exported: %v)", tt.series, v, ok)
			}
		})
	}
}

// metric reads the value of series (a name, with its labels if it has
// any) from the server's metrics, and whether it is there.
func (h *harness) metric(series string) (float64, bool) {
	h.t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(h.do("GET", h.internal+contract.PathMetrics, nil).body))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}
