package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// adminGet reads path (under admin.Prefix, with its query) from the Admin
// API as person, and checks the answer against docs/admin-openapi.yaml.
func adminGet(t *testing.T, person *hdctest.Stack, path string) hdctest.Answer {
	t.Helper()
	resp, err := person.HTTP.Get(person.Internal + admin.Prefix + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	route, _, _ := strings.Cut(path, "?")
	a := hdctest.Answer{Method: http.MethodGet, Path: route, Status: resp.StatusCode, Header: resp.Header, Body: body}
	doc, err := hdctest.AdminOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Check(a, nil); err != nil {
		t.Errorf("GET %s: against docs/admin-openapi.yaml: %v\n%.600s", path, err, body)
	}
	return a
}

// TestAuditExportLimitBounded (fifth review, finding 6): the export's
// limit is bounded as every list's is, 1 to 1000, and refused beyond with
// the same problem (400 invalid_request); hdc audit export --limit is
// held to the same bound, through the API and in direct mode.
func TestAuditExportLimitBounded(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	op := s.Person(pki.Operator, "alice@example.org")
	s.NewClient("export") // records to export
	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/audit-events/export?limit=99999999999", http.StatusBadRequest},
		{"/audit-events/export?limit=1001", http.StatusBadRequest},
		{"/audit-events/export?limit=0", http.StatusBadRequest},
		{"/audit-events/export?limit=1000", http.StatusOK},
		{"/audit-events/export", http.StatusOK},
		{"/audit-events?limit=99999999999", http.StatusBadRequest},
	} {
		t.Run(tt.path, func(t *testing.T) {
			a := adminGet(t, op, tt.path)
			if tt.status == http.StatusOK {
				if a.Status != http.StatusOK {
					t.Fatalf("%d %.300s", a.Status, a.Body)
				}
				return
			}
			p := testkit.WantProblem(t, a.Status, a.Header, a.Body, tt.status, problem.CodeInvalidRequest)
			if p.Detail != "limit must be a whole number from 1 to 1000" {
				t.Errorf("detail %q, want the lists' own", p.Detail)
			}
		})
	}
	for mode, who := range map[string]*hdctest.Stack{"through the API": op, "direct": s} {
		if _, _, err := who.HDCRun("audit", "export", "--limit", "1001"); err == nil || !strings.Contains(err.Error(), "limit") {
			t.Errorf("hdc audit export --limit 1001 (%s): %v, want a refusal naming the limit", mode, err)
		}
		if out, _, err := who.HDCRun("audit", "export", "--limit", "1000"); err != nil || !strings.Contains(out, `"resourceType":"AuditEvent"`) {
			t.Errorf("hdc audit export --limit 1000 (%s): %v\n%.300s", mode, err, out)
		}
	}
}
