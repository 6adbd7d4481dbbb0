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
	"github.com/health-data-connect/hdc/internal/version"
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
	v := version.Get()
	tests := []struct {
		series string
		ok     func(float64) bool
	}{
		{`hdc_backend_build_info{goversion="` + v.Go + `",revision="` + v.Revision + `",version="` + v.Version + `"}`, is(1)},
		{"hdc_backend_ready", is(1)},
		{"hdc_backend_audit_checkpoint_last_success_timestamp_seconds", func(v float64) bool { return v > now-60 && v <= now+1 }},
		{"hdc_backend_audit_checkpoint_interval_seconds", is(h.cfg.AuditCheckpointInterval.Seconds())},
		// SQLite's pool has no bound; the scrape may hold its one connection.
		{"hdc_backend_db_max_connections", is(0)},
		{`hdc_backend_db_connections{state="idle"}`, atLeast(0)},
		{`hdc_backend_db_connections{state="in_use"}`, atLeast(0)},
		{"hdc_backend_db_waits_total", atLeast(0)},
		{"hdc_backend_db_wait_seconds_total", atLeast(0)},
		{`hdc_backend_fresh_requests_total{result="replayed"}`, is(0)},
	}
	for _, tt := range tests {
		t.Run(tt.series, func(t *testing.T) {
			if v, ok := h.metric(tt.series); !ok || !tt.ok(v) {
				t.Fatalf("%s is %v (exported: %v)", tt.series, v, ok)
			}
		})
	}
}

// TestReadyMetric: hdc_backend_ready reads 0 once the database does not
// answer, as GET /readyz answers 503.
func TestReadyMetric(t *testing.T) {
	h := start(t, nil)
	if err := h.srv.store.Close(); err != nil {
		t.Fatal(err)
	}
	if v, ok := h.metric("hdc_backend_ready"); !ok || v != 0 {
		t.Fatalf("with the database closed, hdc_backend_ready is %v (exported: %v)", v, ok)
	}
	wantProblem(t, h.do("GET", h.internal+contract.PathReady, nil), 503, "not_ready")
}

func is(want float64) func(float64) bool { return func(v float64) bool { return v == want } }

func atLeast(least float64) func(float64) bool { return func(v float64) bool { return v >= least } }

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
