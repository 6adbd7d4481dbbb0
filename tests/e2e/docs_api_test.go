package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/backend/webhook/delivery"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestDocsListEveryOperation holds docs/api.md's table of operations (its
// section "In one page") to docs/openapi.yaml: every operation of the
// document has its row, and every row is an operation of the document,
// once. A client that codes from api.md finds every route it may call.
func TestDocsListEveryOperation(t *testing.T) {
	t.Parallel()
	var documented []string
	paths, _ := apiDocument(t).Root["paths"].(map[string]any)
	for path, item := range paths {
		for method := range item.(map[string]any) {
			if slices.Contains([]string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}, method) {
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(documented)
	if len(documented) == 0 {
		t.Fatalf("%s has no operation", hdctest.APIDocPath)
	}
	listed := operationRows(t, apiSection(t, "## In one page"))
	for _, op := range documented {
		if n := countOf(listed, op); n != 1 {
			t.Errorf("docs/api.md's table lists %s %d times, want once: it is an operation of %s", op, n, hdctest.APIDocPath)
		}
	}
	for _, op := range listed {
		if !slices.Contains(documented, op) {
			t.Errorf("docs/api.md's table lists %s, which is no operation of %s", op, hdctest.APIDocPath)
		}
	}
}

// TestDocsListEveryEventType holds the event types docs/api.md lists (the
// table of its section "Webhooks") and docs/openapi.yaml's EventName to
// the code's: the events of the API and the backend's own, which a
// subscription may select, and the test event.
func TestDocsListEveryEventType(t *testing.T) {
	t.Parallel()
	selectable := slices.Concat(webhook.Events, webhook.SystemEvents)
	want := append(slices.Clone(selectable), delivery.TestEventType)
	row := regexp.MustCompile("(?m)^\\| (`[a-z]+\\.[a-z]+`(?:, `[a-z]+\\.[a-z]+`)*) \\|")
	var listed []string
	for _, m := range row.FindAllStringSubmatch(apiSection(t, "## Webhooks"), -1) {
		for _, name := range strings.Split(m[1], ", ") {
			listed = append(listed, strings.Trim(name, "`"))
		}
	}
	if !slices.Equal(listed, want) {
		t.Errorf("docs/api.md's event types are %q, the code's %q", listed, want)
	}
	var enum []string
	values, _ := apiDocument(t).At("/components/schemas/EventName/enum").([]any)
	for _, v := range values {
		s, _ := v.(string)
		enum = append(enum, s)
	}
	if !slices.Equal(enum, selectable) {
		t.Errorf("%s's EventName is %q, the events a subscription selects %q", hdctest.APIDocPath, enum, selectable)
	}
}

// operationRows returns the operations a Markdown table's rows name in
// their first cell, "METHOD path", in a code span or a link's text; a
// query written after the path is no part of it.
func operationRows(t *testing.T, text string) []string {
	t.Helper()
	row := regexp.MustCompile("(?m)^\\| \\[?`([A-Z]+) (/[^`\\s?]*)[^`]*`")
	var ops []string
	for _, m := range row.FindAllStringSubmatch(text, -1) {
		ops = append(ops, m[1]+" "+m[2])
	}
	if len(ops) == 0 {
		t.Fatal("docs/api.md's section lists no operation")
	}
	return ops
}

// apiSection returns the text of docs/api.md under heading, up to the
// next heading of its level.
func apiSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hdctest.RepoRoot, "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/api.md has no %q", heading)
	}
	level, _, _ := strings.Cut(heading, " ")
	section, _, _ = strings.Cut(section, "\n"+level+" ")
	return section
}

// countOf is how many times v is in s.
func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}
