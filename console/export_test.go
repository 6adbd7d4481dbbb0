package console

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAuditExport: the audit page's download is every record its filters
// select as FHIR AuditEvent NDJSON, a file to save, for an auditor as for
// an operator, and the API records the export; a filter the API refuses is
// a problem page, not a file.
func TestAuditExport(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	a, b := s.consoles[alice].signIn(), s.consoles[bob].signIn()
	client := newClient(t, a, "acme")
	_, page := a.get("/audit?workspace=acme&action=client_create")
	link := html.UnescapeString(find(t, page, `id="export" href="([^"]+)"`))
	if link != "/audit/export?action=client_create&workspace=acme" {
		t.Fatalf("the audit page's export: %q", link)
	}
	for _, who := range []*browser{a, b} {
		status, disposition, body := who.download(link)
		lines := strings.Split(strings.TrimSpace(body), "\n")
		if status != http.StatusOK || !strings.HasPrefix(disposition, `attachment; filename="hdc-audit-`) || !strings.HasSuffix(disposition, `.ndjson"`) || len(lines) != 1 {
			t.Fatalf("the export: %d, %q\n%s", status, disposition, body)
		}
		var ev struct {
			ResourceType string `json:"resourceType"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil || ev.ResourceType != "AuditEvent" || !strings.Contains(lines[0], client) {
			t.Fatalf("the export's line: %v %s", err, lines[0])
		}
	}
	for _, q := range []string{"since=yesterday", "agent=" + url.QueryEscape("not a name")} {
		if status, disposition, body := a.download("/audit/export?" + q); status != http.StatusBadRequest || disposition != "" || !strings.Contains(body, `id="detail"`) {
			t.Errorf("the export of %s: %d, %q", q, status, disposition)
		}
	}
	_, page = a.get("/audit?action=audit_export")
	if !strings.Contains(page, alice+" exported the audit trail") || !strings.Contains(page, bob+" exported the audit trail") {
		t.Fatalf("the exports' records:\n%s", page)
	}
}

// TestExportLink: the export downloads what the search selects, from its
// first record whatever page the search is on.
func TestExportLink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		search url.Values
		want   string
	}{
		{url.Values{}, "/audit/export"},
		{url.Values{"cursor": {"c-2"}}, "/audit/export"},
		{url.Values{"agent": {alice}, "cursor": {"c-2"}, "since": {"2026-03-15"}}, "/audit/export?agent=alice%40example.org&since=2026-03-15"},
	} {
		if got := exportLink(tc.search); got != tc.want {
			t.Errorf("exportLink(%v) = %q, want %q", tc.search, got, tc.want)
		}
	}
}
