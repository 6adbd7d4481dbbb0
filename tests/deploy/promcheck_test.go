package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// promcheck runs tests/promcheck on files and returns its lines, each a
// metric, a tab, and where a query names it.
func promcheck(t testing.TB, files ...string) ([]string, error) {
	t.Helper()
	out, err := hdctest.RunProgram(t, nil, hdctest.Binary(t, "promcheck"), files...)
	return strings.Split(strings.TrimSpace(string(out)), "\n"), err
}

// TestPromcheck holds tests/promcheck, which reads the metrics of the
// alert rules and the dashboard, to what Prometheus and Grafana read: the
// metrics of every query (by name or __name__, under functions, in a row's
// panels, in a variable's label_values or query_result), with Grafana's
// duration variables; a query that does not parse, or that selects series
// without naming their metric, is refused.
func TestPromcheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, content string
		want                []string // the metrics named, in order
		refused             string   // or what the refusal says
	}{
		{"rules", "rules.yml", `groups:
- name: g
  rules:
  - alert: A
    expr: sum(rate(a_total{code=~"5.."}[5m])) / sum(rate(b_total[5m])) > 0.1
  - record: r
    expr: histogram_quantile(0.99, sum by (le) (rate(c_seconds_bucket[5m])))
  - alert: B
    expr: '{__name__="d"} == 0 unless on(instance) e'
`, []string{"a_total", "b_total", "c_seconds_bucket", "d", "e"}, ""},
		{"a selector without a metric name", "rules.yml", `groups:
- name: g
  rules:
  - alert: A
    expr: 'sum({job="hdc"}) > 0'
`, nil, "names no metric"},
		{"a dashboard", "d.json", `{
  "panels": [
    {"id": 1, "type": "row", "collapsed": true, "panels": [
      {"id": 2, "targets": [{"refId": "A", "expr": "sum(rate(f_total{instance=~\"$edge\"}[$__rate_interval]))"}]}
    ]},
    {"id": 3, "targets": [{"refId": "A", "expr": "g - on() group_right h offset ${__interval}"}]}
  ],
  "templating": {"list": [
    {"name": "datasource", "type": "datasource", "query": "prometheus"},
    {"name": "edge", "type": "query", "query": {"query": "label_values(i_info, instance)", "refId": "v"}},
    {"name": "top", "type": "query", "query": "query_result(topk(3, j))"},
    {"name": "label", "type": "query", "query": "label_values(instance)"}
  ]}
}`, []string{"f_total", "g", "h", "i_info", "j"}, ""},
		{"a variable outside a string", "d.json", `{"panels": [{"id": 1, "targets": [{"refId": "A", "expr": "rate(f_total[$window])"}]}]}`, nil, `panel 1 "", query A: 1:14: parse error`},
		{"a variable query of another kind", "d.json", `{"templating": {"list": [{"name": "m", "type": "query", "query": "metrics(hdc_)"}]}}`, nil, "variable m: a query promcheck cannot read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(file, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			lines, err := promcheck(t, file)
			switch {
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Fatalf("promcheck read %q, %v; want a refusal saying %q", lines, err, tt.refused)
			case tt.refused != "":
				return
			case err != nil:
				t.Fatal(err)
			}
			var got []string
			for _, l := range lines {
				metric, place, ok := strings.Cut(l, "\t")
				if !ok || !strings.HasPrefix(place, file+": ") {
					t.Fatalf("the line %q is not a metric, a tab and its place in %s", l, file)
				}
				got = append(got, metric)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("promcheck read %q, want the metrics %q", lines, tt.want)
			}
		})
	}
}
