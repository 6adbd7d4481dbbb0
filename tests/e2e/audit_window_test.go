package e2e

import (
	"net/http"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestAuditRefusalsCountedPerWindow (second review, finding 6): through the
// real binaries, 36 bad logins from 3 sources leave one record per source
// at once and one more per source, with its count, when the window
// (HDC_AUDIT_REFUSAL_WINDOW) ends; a refusal of another kind, or from
// another source, is recorded at once; the trail verifies.
func TestAuditRefusalsCountedPerWindow(t *testing.T) {
	t.Parallel()
	const window = 3 * time.Second
	s := hdctest.StartStack(t, "HDC_AUDIT_REFUSAL_WINDOW="+window.String())
	c := s.NewClient("audit-window")
	sources := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}
	for _, ip := range sources {
		for range 12 { // 10 refused 401, then the throttle's 429s, which are not recorded
			s.LoginFrom(ip, "", c, "hdc_cs_wrong-secret-of-a-stranger")
		}
	}
	if got := refusals(s.AuditTrail(c.Workspace), audit.LoginFailed); len(got) != len(sources) {
		t.Fatalf("%d login_failed records at once, want one per source (%d): %v", len(got), len(sources), got)
	}
	var failed []audit.Record
	testkit.Eventually(t, 4*window, "the window's counts", func() bool {
		failed = refusals(s.StoredAudit(c.Workspace), audit.LoginFailed)
		return len(failed) >= 2*len(sources)
	})
	failed = refusals(s.AuditTrail(c.Workspace), audit.LoginFailed) // the CLI lists them too
	if len(failed) != 2*len(sources) {
		t.Fatalf("%d login_failed records, want %d", len(failed), 2*len(sources))
	}
	// The windows close together, their records in any order.
	countedBy := map[netip.Addr]audit.Record{}
	for _, r := range failed[len(sources):] {
		countedBy[r.Source] = r
	}
	for i, ip := range sources {
		first, counted := failed[i], countedBy[netip.MustParseAddr(ip)]
		if first.Source != netip.MustParseAddr(ip) || first.Count != 0 || first.Request == "" {
			t.Errorf("the first refusal from %s: %+v", ip, first.Event)
		}
		if counted.Source != netip.MustParseAddr(ip) || counted.Count != 9 || counted.Client != c.ID || counted.Request != "" {
			t.Errorf("the count of %s's window: %+v, want 9 refusals", ip, counted.Event)
		}
	}

	// Another kind from a counted source, and a new source: at once.
	tk := s.Login(c, false, "")
	req, _ := http.NewRequest("GET", s.Edge+hdctest.RetrievePath+"?identifier="+url.QueryEscape(uuid.NewString()), nil)
	req.Header.Set(hdctest.Authorization, "Bearer "+tk.AccessToken)
	s.Plant(req)
	resp, err := s.Checked(hdctest.FromAddr(sources[0])).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a retrieval of no record: %d", resp.StatusCode)
	}
	s.LoginFrom("127.0.0.5", "", c, "hdc_cs_wrong-secret-of-a-stranger")
	trail := s.AuditTrail(c.Workspace)
	if denied := refusals(trail, audit.RecordRetrieve); len(denied) != 1 || denied[0].Source != netip.MustParseAddr(sources[0]) {
		t.Fatalf("the denied retrieval from a counted source: %v", denied)
	}
	if last := refusals(trail, audit.LoginFailed); len(last) != 2*len(sources)+1 || last[len(last)-1].Source != netip.MustParseAddr("127.0.0.5") {
		t.Fatalf("the refusal from a new source is not recorded at once: %v", last)
	}
	s.VerifyAudit(t, nil, nil)
}

// refusals returns the records of action refused in trail.
func refusals(trail []audit.Record, action audit.Action) []audit.Record {
	var out []audit.Record
	for _, r := range trail {
		if r.Action == action && r.Outcome == audit.Denied {
			out = append(out, r)
		}
	}
	return out
}
