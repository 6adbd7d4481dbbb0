// Command promcheck prints the metrics that Prometheus rule files and
// Grafana dashboards select, read with Prometheus's own PromQL parser: a
// line per metric and place, the metric's name, a tab, and where it is
// named (the file, and the rule, the panel or the variable).
//
//	promcheck FILE...   a file ending in .json is a Grafana dashboard, any other a rule file
//
// It fails, naming the place, on a query that does not parse and on a
// selector without a metric name. tests/deploy runs it and checks that
// every metric it prints is in a live scrape of the edge and the backend.
//
// It is a module of its own, whose go.mod also names promtool as a tool,
// so that the product's go.mod does not grow and both read PromQL at one
// version of Prometheus.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: promcheck FILE...")
		os.Exit(2)
	}
	var lines []string
	for _, file := range os.Args[1:] {
		uses, err := read(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, "promcheck:", err)
			os.Exit(1)
		}
		for _, u := range uses {
			lines = append(lines, u.metric+"\t"+u.place)
		}
	}
	slices.Sort(lines)
	for _, l := range slices.Compact(lines) {
		fmt.Println(l)
	}
}

// A use is a metric a query selects, and the place of the query.
type use struct{ metric, place string }

// read returns the metrics the queries of file select.
func read(file string) ([]use, error) {
	var qs []query
	var err error
	if strings.HasSuffix(file, ".json") {
		qs, err = dashboardQueries(file)
	} else {
		qs, err = ruleQueries(file)
	}
	if err != nil {
		return nil, err
	}
	var uses []use
	for _, q := range qs {
		names, err := metrics(q.expr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", file, q.place, err)
		}
		for _, n := range names {
			uses = append(uses, use{n, file + ": " + q.place})
		}
	}
	return uses, nil
}

// A query is a PromQL expression and its place in its file.
type query struct{ expr, place string }

// promql reads PromQL as Prometheus does by default.
var promql = parser.NewParser(parser.Options{})

// metrics returns the names of the metrics expr selects.
func metrics(expr string) ([]string, error) {
	e, err := promql.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	var missing error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := selectedName(vs)
		if name == "" {
			missing = fmt.Errorf("the selector %s names no metric", vs)
		}
		names = append(names, name)
		return nil
	})
	return names, missing
}

// selectedName is the metric a selector names, by name or by an equality
// on __name__; "" when it names none.
func selectedName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// ruleQueries returns the expressions of a rule file, read as promtool
// reads it.
func ruleQueries(file string) ([]query, error) {
	groups, errs := rulefmt.ParseFile(file, false, model.UTF8Validation, promql, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var qs []query
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			place := "group " + g.Name + ", record " + r.Record
			if r.Alert != "" {
				place = "group " + g.Name + ", alert " + r.Alert
			}
			qs = append(qs, query{r.Expr, place})
		}
	}
	return qs, nil
}

// dashboard is what promcheck reads of a Grafana dashboard.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name string `json:"name"`
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
}

type panel struct {
	ID      int    `json:"id"`
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

type variable struct {
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Query json.RawMessage `json:"query"`
}

// dashboardQueries returns the queries of a dashboard's panels, query
// variables and annotations, with Grafana's duration variables stood in
// for by a duration.
func dashboardQueries(file string) ([]query, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	qs := panelQueries(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		expr, err := variableQuery(v.Query)
		if err != nil {
			return nil, fmt.Errorf("%s: variable %s: %w", file, v.Name, err)
		}
		if expr != "" {
			qs = append(qs, query{expr, "variable " + v.Name})
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			qs = append(qs, query{a.Expr, "annotation " + a.Name})
		}
	}
	for i := range qs {
		qs[i].expr = grafanaDurations.Replace(qs[i].expr)
	}
	return qs, nil
}

// panelQueries returns the queries of panels and of the panels of their
// rows.
func panelQueries(panels []panel) []query {
	var qs []query
	for _, p := range panels {
		for _, t := range p.Targets {
			qs = append(qs, query{t.Expr, fmt.Sprintf("panel %d %q, query %s", p.ID, p.Title, t.RefID)})
		}
		qs = append(qs, panelQueries(p.Panels)...)
	}
	return qs
}

// grafanaDurations replaces the variables Grafana sets to a duration, so
// that a query that uses them parses. Every other variable must stand in
// a string (a label matcher's value), where PromQL takes any text.
var grafanaDurations = strings.NewReplacer(
	"${__rate_interval}", "5m", "$__rate_interval", "5m",
	"${__interval}", "5m", "$__interval", "5m",
	"${__range}", "5m", "$__range", "5m")

// variableQuery returns the PromQL in a query variable's query, given as
// a string or as an object with a query member: the selector of
// label_values(SELECTOR, LABEL) or the expression of query_result(EXPR);
// "" for label_values(LABEL), which selects no metric.
func variableQuery(raw json.RawMessage) (string, error) {
	var q string
	if err := json.Unmarshal(raw, &q); err != nil {
		var obj struct{ Query string }
		if err := json.Unmarshal(raw, &obj); err != nil {
			return "", errors.New("a query that is neither a string nor an object with a query")
		}
		q = obj.Query
	}
	q = strings.TrimSpace(q)
	if inner, ok := call(q, "query_result"); ok {
		return inner, nil
	}
	inner, ok := call(q, "label_values")
	if !ok {
		return "", fmt.Errorf("a query promcheck cannot read: %q (label_values or query_result)", q)
	}
	i := strings.LastIndex(inner, ",")
	if i < 0 {
		return "", nil
	}
	return strings.TrimSpace(inner[:i]), nil
}

// call returns the argument text of q when q is a call of fn.
func call(q, fn string) (string, bool) {
	inner, ok := strings.CutPrefix(q, fn+"(")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(inner, ")")
}
