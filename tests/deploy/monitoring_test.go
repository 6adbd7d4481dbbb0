package deploy

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// The monitoring files of deploy/: the alert rules, their unit tests for
// promtool, the Grafana dashboard.
const (
	alertRules     = "deploy/prometheus/hdc-alerts.yml"
	alertRuleTests = "deploy/prometheus/hdc-alerts.test.yml"
	dashboard      = "deploy/grafana/hdc.json"
)

// repoPath is the path of a file of the repository, by its slash-separated
// path.
func repoPath(path string) string { return filepath.Join(hdctest.RepoRoot, filepath.FromSlash(path)) }

// ruleFile is what the tests read of a Prometheus rule file.
type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Alert       string            `yaml:"alert"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// ruleTestFile is what the tests read of promtool's unit tests of rules.
type ruleTestFile struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t testing.TB, path string, v any) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(readRepoFile(t, path)), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestAlertRules: promtool checks the alert rules and runs their unit
// tests, and every alert has a severity, a summary, a description and a
// for of a minute or more, and is shown both firing and silent by a test.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	promtool := hdctest.Binary(t, "promtool")
	for _, args := range [][]string{{"check", "rules", repoPath(alertRules)}, {"test", "rules", repoPath(alertRuleTests)}} {
		t.Run("promtool "+strings.Join(args[:2], " "), func(t *testing.T) {
			if out, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
				t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		})
	}

	var rules ruleFile
	var tests ruleTestFile
	readYAML(t, alertRules, &rules)
	readYAML(t, alertRuleTests, &tests)
	firing, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, at := range tc.AlertRuleTest {
			firing[at.Alertname] = firing[at.Alertname] || len(at.ExpAlerts) > 0
			silent[at.Alertname] = silent[at.Alertname] || len(at.ExpAlerts) == 0
		}
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			t.Run(r.Alert, func(t *testing.T) {
				if s := r.Labels["severity"]; s != "critical" && s != "warning" {
					t.Errorf("severity %q, want critical or warning", s)
				}
				for _, a := range []string{"summary", "description"} {
					if r.Annotations[a] == "" {
						t.Errorf("no %s", a)
					}
				}
				if d, err := model.ParseDuration(r.For); err != nil || time.Duration(d) < time.Minute {
					t.Errorf("for %q: fires on the first evaluation that sees it, want a minute or more", r.For)
				}
				if !firing[r.Alert] || !silent[r.Alert] {
					t.Errorf("%s shows it firing: %v, silent: %v; want both", alertRuleTests, firing[r.Alert], silent[r.Alert])
				}
			})
		}
	}
}

// grafanaDashboard is what the tests read of a Grafana dashboard.
type grafanaDashboard struct {
	SchemaVersion int            `json:"schemaVersion"`
	UID           string         `json:"uid"`
	Title         string         `json:"title"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string             `json:"name"`
			Type       string             `json:"type"`
			Query      json.RawMessage    `json:"query"`
			Datasource *grafanaDatasource `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type grafanaPanel struct {
	ID         int                `json:"id"`
	Type       string             `json:"type"`
	Title      string             `json:"title"`
	GridPos    *grafanaGridPos    `json:"gridPos"`
	Datasource *grafanaDatasource `json:"datasource"`
	Targets    []struct {
		RefID      string             `json:"refId"`
		Expr       string             `json:"expr"`
		Datasource *grafanaDatasource `json:"datasource"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // a collapsed row's
}

type grafanaGridPos struct{ H, W, X, Y int }

type grafanaDatasource struct{ Type, UID string }

// allPanels returns panels and the panels of their rows.
func allPanels(panels []grafanaPanel) []grafanaPanel {
	var all []grafanaPanel
	for _, p := range panels {
		all = append(all, p)
		all = append(all, allPanels(p.Panels)...)
	}
	return all
}

// grafanaVariable matches a variable's use as Grafana reads them: $name,
// ${name}, ${name:format}, ${name.field}, [[name]].
var grafanaVariable = regexp.MustCompile(`\$(\w+)|\[\[(\w+?)(?::\w+)?\]\]|\$\{(\w+)(?:\.[^:^}]+)?(?::[^}]+)?\}`)

// grafanaBuiltins are the variables Grafana defines itself.
var grafanaBuiltins = []string{"__rate_interval", "__interval", "__interval_ms", "__range", "__range_s", "__range_ms",
	"__dashboard", "__from", "__to", "__name", "__org", "__user", "timeFilter", "__timeFilter"}

// TestDashboard: the dashboard is one Grafana imports as it is: a schema
// version, a uid and a title; panels with ids of their own, a type and a
// place on the grid, none over another; a data source variable of the
// Prometheus kind that every panel, query and query variable uses; no
// variable used that the dashboard does not define.
func TestDashboard(t *testing.T) {
	t.Parallel()
	text := readRepoFile(t, dashboard)
	var d grafanaDashboard
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		t.Fatalf("%s: %v", dashboard, err)
	}
	if d.SchemaVersion < 36 || d.UID == "" || d.Title == "" {
		t.Fatalf("schemaVersion %d, uid %q, title %q: want a schema of Grafana 9 or later (36), a uid and a title", d.SchemaVersion, d.UID, d.Title)
	}
	defined := slices.Clone(grafanaBuiltins)
	dsVariable := ""
	for _, v := range d.Templating.List {
		defined = append(defined, v.Name)
		if v.Type == "datasource" && string(v.Query) == `"prometheus"` {
			dsVariable = v.Name
		}
	}
	if dsVariable == "" {
		t.Fatal("no template variable of type datasource for Prometheus")
	}
	dsUID := "${" + dsVariable + "}"
	checkDatasource := func(t *testing.T, what string, ds *grafanaDatasource) {
		t.Helper()
		if ds == nil || ds.Type != "prometheus" || ds.UID != dsUID {
			t.Errorf("%s's datasource is %+v, want the variable %s", what, ds, dsUID)
		}
	}
	t.Run("variables", func(t *testing.T) {
		for _, v := range d.Templating.List {
			if v.Type == "query" {
				checkDatasource(t, "variable "+v.Name, v.Datasource)
			}
		}
		for _, m := range grafanaVariable.FindAllStringSubmatch(text, -1) {
			if name := m[1] + m[2] + m[3]; !slices.Contains(defined, name) {
				t.Errorf("%s uses %s, which the dashboard does not define", dashboard, m[0])
			}
		}
	})
	ids := map[int]string{}
	var placed []grafanaPanel
	for _, p := range allPanels(d.Panels) {
		t.Run(fmt.Sprintf("panel %d %s", p.ID, p.Title), func(t *testing.T) {
			if prev, ok := ids[p.ID]; ok || p.ID <= 0 {
				t.Errorf("id %d, that of %q too", p.ID, prev)
			}
			ids[p.ID] = p.Title
			g := p.GridPos
			switch {
			case p.Type == "":
				t.Error("no type")
			case g == nil || g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24:
				t.Errorf("gridPos %+v: want one within the grid's 24 columns", g)
			}
			if g != nil {
				for _, q := range placed {
					if overlap(*g, *q.GridPos) {
						t.Errorf("gridPos %+v lies over panel %d's %+v", *g, q.ID, *q.GridPos)
					}
				}
				placed = append(placed, p)
			}
			if p.Type == "row" {
				return
			}
			checkDatasource(t, "the panel", p.Datasource)
			if len(p.Targets) == 0 {
				t.Error("no query")
			}
			for _, q := range p.Targets {
				checkDatasource(t, "query "+q.RefID, q.Datasource)
				if q.RefID == "" || q.Expr == "" {
					t.Errorf("a query with refId %q and expr %q", q.RefID, q.Expr)
				}
			}
		})
	}
}

// overlap reports whether two places on the grid share a cell.
func overlap(a, b grafanaGridPos) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

// prometheusSeries are the series Prometheus makes itself for every
// target it scrapes: no scrape holds them.
var prometheusSeries = []string{"up"}

// TestMonitoredMetricsExist: every metric the alert rules and the
// dashboard name (read by tests/promcheck with the PromQL parser) is in a
// scrape of a running edge and backend, once they served what the
// dashboard shows: a login, a failed one, an encrypted upload, a refused
// envelope, a webhook subscription and an event delivered.
func TestMonitoredMetricsExist(t *testing.T) {
	t.Parallel()
	named, err := promcheck(t, repoPath(alertRules), repoPath(dashboard))
	if err != nil {
		t.Fatal(err)
	}
	s := hdctest.StartStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms")
	serveEverything(t, s)
	scraped := scrape(t, http.DefaultClient, s.Metrics+"/metrics")
	for name := range scrape(t, s.InternalClient(pki.Scraper), s.Internal+contract.PathMetrics) {
		scraped[name] = true
	}
	// An edge exports whether it counts with the fleet only when it has a
	// Redis (the test stack's edges have the test Redis, when there is one).
	if os.Getenv(hdctest.RedisURLEnv) == "" && os.Getenv(hdctest.RedisRequireEnv) != "1" {
		t.Logf("no %s: hdc_edge_rate_limit_shared is not looked for", hdctest.RedisURLEnv)
		scraped["hdc_edge_rate_limit_shared"] = true
	}
	places := map[string][]string{}
	for _, line := range named {
		metric, place, _ := strings.Cut(line, "\t")
		if !scraped[metric] && !slices.Contains(prometheusSeries, metric) {
			places[metric] = append(places[metric], strings.TrimPrefix(place, hdctest.RepoRoot+string(filepath.Separator)))
		}
	}
	for _, metric := range slices.Sorted(maps.Keys(places)) {
		t.Errorf("%s is in no scrape of the edge or the backend; named by:\n\t%s", metric, strings.Join(places[metric], "\n\t"))
	}
}

// serveEverything has s serve what the dashboard shows, so that every
// labelled metric has its series: a client's encrypted login, a failed
// login, an encrypted upload, a refused envelope, and a webhook event
// delivered to a subscription.
func serveEverything(t *testing.T, s *hdctest.Stack) {
	t.Helper()
	c := s.NewClient("monitored")
	tk := s.Login(c, true, "")
	s.FailLogin(t, c, c.ID)
	s.Upload(c, tk, true, testkit.RandomBytes(1000), "?task=smart")
	refused := s.Do("POST", hdctest.SubsPath, []byte(`{"protected":1}`),
		map[string]string{hdctest.Authorization: "Bearer " + tk.AccessToken, hdctest.JWEHeader: "JWE", "Content-Type": hdctest.JSONType})
	hdctest.ExpectProblem(t, refused, 400, "invalid_envelope")

	const key = "whsec-for-the-monitoring-test"
	rc := hdctest.NewWebhookReceiver(t, key, 0)
	sub := s.Send(c, true, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+rc.Srv.URL+`/hook","signing_key":"`+key+`"}`), hdctest.Bearer(tk))
	if sub.Status != 200 {
		t.Fatalf("subscribe: %s", sub)
	}
	s.HDC(nil, "events", "publish", "--workspace", c.Workspace, "--type", "appointment.created", "--data", `{"appointment_id":"a-1"}`)
	// The delivery is counted once it is recorded: after its attempt.
	delivered := `hdc_backend_webhook_deliveries_total{outcome="delivered",protocol="http"}`
	testkit.Eventually(t, time.Minute, "the event delivered", func() bool {
		return hdctest.ScrapeMetric(s.InternalClient(pki.Scraper), s.Internal+contract.PathMetrics, delivered) >= 1 && len(rc.Deliveries()) >= 1
	})
}

// scrape returns the names of the series at url: a histogram's _bucket,
// _sum and _count, a summary's own name, _sum and _count.
func scrape(t *testing.T, client *http.Client, url string) map[string]bool {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	names := map[string]bool{}
	for name, f := range families {
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[name], names[name+"_sum"], names[name+"_count"] = true, true, true
		default:
			names[name] = true
		}
	}
	return names
}
