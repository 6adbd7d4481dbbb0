package scale

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestBenchRuns runs hdc-bench briefly, as docs/performance.md does: its
// proxy part at 1 KiB with the breakdown. What it reports must be whole: a row for
// each hdc-edge, with CPU figures a run that measured nothing could not
// give, the four stages of the breakdown, and the small request's targets.
func TestBenchRuns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bench.json")
	stdout, err := hdctest.RunProgram(t, nil, hdctest.Binary(t, "hdc-bench"), "--skip", "codec,upload", "--payloads", "1KiB",
		"--rounds", "2", "--duration", "300ms", "--concurrency", "4", "--breakdown", "--json", out)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Proxy []struct {
			Payload    string  `json:"payload"`
			Enc        string  `json:"enc"`
			PlainCPU   float64 `json:"plain_cpu_us_per_request"`
			EdgeCPU    float64 `json:"edge_cpu_us_per_request"`
			RatioLo    float64 `json:"cpu_ratio_round_min"`
			RatioHi    float64 `json:"cpu_ratio_round_max"`
			CodecUs    float64 `json:"codec_open_seal_us"`
			Requests   int     `json:"requests"`
			RoundCount int     `json:"rounds"`
		} `json:"proxy"`
		Breakdown []map[string]any `json:"breakdown"`
		Targets   []struct {
			Name     string  `json:"name"`
			Measured float64 `json:"measured"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Proxy) != 2 {
		t.Fatalf("%d proxy rows, want one per hdc-edge: %s", len(s.Proxy), data)
	}
	for _, r := range s.Proxy {
		if r.Enc == "" || r.PlainCPU <= 0 || r.EdgeCPU <= 0 || r.CodecUs <= 0 || r.Requests <= 0 ||
			r.RoundCount != 2 || r.RatioLo <= 0 || r.RatioLo > r.RatioHi {
			t.Fatalf("row %+v", r)
		}
	}
	if len(s.Breakdown) != 1 {
		t.Fatalf("breakdown %v", s.Breakdown)
	}
	for _, stage := range []string{"plain_cpu_us_per_request", "handle_cpu_us_per_request", "auth_cpu_us_per_request", "edge_cpu_us_per_request"} {
		if v, _ := s.Breakdown[0][stage].(float64); v <= 0 {
			t.Fatalf("breakdown's %s = %v", stage, s.Breakdown[0][stage])
		}
	}
	want := map[string]bool{"edge CPU/req at 1 KiB A128CBC-HS256, times plain Caddy's": false,
		"edge req/s at 1 KiB A256GCM, share of plain Caddy": false}
	for _, tg := range s.Targets {
		if _, ok := want[tg.Name]; ok && tg.Measured > 0 {
			want[tg.Name] = true
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("no target %q measured: %v", name, s.Targets)
		}
	}
	if !strings.Contains(string(stdout), "(a') where the edge's CPU goes") {
		t.Errorf("the breakdown's table is not printed:\n%s", stdout)
	}
}
