package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
)

// listedRecord is what the tests read of a listed audit record.
type listedRecord struct {
	Workspace string `json:"workspace"`
	Seq       int64  `json:"seq"`
	Action    string `json:"action"`
	Entity    struct {
		Kind, ID string
	} `json:"entity"`
	Person struct {
		Name, Role string
	} `json:"person"`
	Hash string `json:"hash"`
}

// actions returns the workspace/seq action person of each record the
// search path answers to who.
func (a *api) actions(t *testing.T, who, path string) []string {
	t.Helper()
	var page adminapi.Page[listedRecord]
	a.do(who, "GET", path, nil).decode(t, 200, &page)
	var out []string
	for _, r := range page.Items {
		if r.Hash == "" {
			t.Errorf("record %s/%d listed without its hash", r.Workspace, r.Seq)
		}
		out = append(out, r.Workspace+"/"+strconv.FormatInt(r.Seq, 10)+" "+r.Action+" "+r.Person.Name)
	}
	return out
}

// TestAuditTrail: an auditor finds an operator's change by her name, and
// exports and verifies the trail; each of the auditor's reads is itself
// recorded, and found by his name, trail by trail or newest first.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.do("operator", "POST", "/admin/v1/clients", map[string]string{"workspace_id": "w1"}).decode(t, 201, nil)
	if got := a.actions(t, "auditor", "/admin/v1/audit-events?agent="+url.QueryEscape(alice)); strings.Join(got, ",") != "w1/1 client_create "+alice {
		t.Fatalf("alice's records: %v", got)
	}
	r := a.do("auditor", "GET", "/admin/v1/audit-events/export?workspace=w1", nil)
	if r.status != 200 || r.header.Get("Content-Type") != adminapi.ContentTypeNDJSON || !strings.HasPrefix(string(r.body), `{"resourceType":"AuditEvent"`) ||
		strings.Count(string(r.body), "\n") != 1 {
		t.Fatalf("the export: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	var rep adminapi.AuditReport
	a.do("auditor", "GET", "/admin/v1/audit/verify", nil).decode(t, 200, &rep)
	if len(rep.Trails) != 2 || rep.Trails[0].Status != trail.StatusOK || rep.Trails[1].Status != trail.StatusOK || rep.Checkpoint != nil {
		t.Fatalf("verify: %+v", rep)
	}
	want := []string{"/1 audit_search " + bob, "/2 audit_verify " + bob, "w1/2 audit_export " + bob}
	if got := a.actions(t, "operator", "/admin/v1/audit-events?agent="+url.QueryEscape(bob)); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("bob's records: %v, want %v", got, want)
	}
	want = []string{"/2 audit_verify " + bob, "w1/2 audit_export " + bob, "/1 audit_search " + bob}
	if got := a.actions(t, "operator", "/admin/v1/audit-events?order=newest&agent="+url.QueryEscape(bob)); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("bob's records newest first: %v, want %v", got, want)
	}
	var page adminapi.Page[listedRecord]
	a.do("operator", "GET", "/admin/v1/audit-events?action=audit_export&limit=1", nil).decode(t, 200, &page)
	if len(page.Items) != 1 || page.Items[0].Entity.ID != "w1" || page.Items[0].Person.Role != "auditor" {
		t.Fatalf("the export's record: %+v", page)
	}
}

// TestAuditRefusals: a query the trail cannot answer is a 400 problem,
// and records nothing.
func TestAuditRefusals(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	tests := []struct{ name, path string }{
		{"a since that is no time", "/admin/v1/audit-events?since=yesterday"},
		{"an until out of range", "/admin/v1/audit-events/export?until=10000-01-01"},
		{"an unknown parameter", "/admin/v1/audit-events?page=2"},
		{"a parameter twice", "/admin/v1/audit-events?agent=" + alice + "&agent=" + bob},
		{"a limit too large", "/admin/v1/audit-events?limit=1001"},
		{"a limit of nothing", "/admin/v1/audit-events/export?limit=0"},
		{"an export's limit beyond a page's", "/admin/v1/audit-events/export?limit=1001"},
		{"an export's limit out of all range", "/admin/v1/audit-events/export?limit=99999999999"},
		{"a cursor not given", "/admin/v1/audit-events?cursor=AAAA"},
		{"an unknown action", "/admin/v1/audit-events?action=drop"},
		{"an order of neither", "/admin/v1/audit-events?order=random"},
		{"an order twice", "/admin/v1/audit-events/export?order=newest&order=oldest"},
		{"an agent that is no one", "/admin/v1/audit-events?agent=a%20b"},
		{"a workspace that is no id", "/admin/v1/audit-events/export?workspace=..%2f"},
		{"a parameter of verify", "/admin/v1/audit/verify?checkpoints=file:///tmp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do("auditor", "GET", tt.path, nil)
			if r.status != 400 || r.problemCode() != "invalid_request" {
				t.Fatalf("got %d %s, want 400 invalid_request", r.status, r.body)
			}
		})
	}
	if heads, err := a.st.AuditHeads(t.Context()); err != nil || len(heads) != 0 {
		t.Fatalf("the refusals were recorded: %+v, %v", heads, err)
	}
}

// brokenTrail holds trail "a", which reads, and trail "b", which fails.
type brokenTrail struct {
	store.Audit
	recs []audit.Record
}

func (b brokenTrail) AuditHeads(context.Context) ([]audit.Head, error) {
	return []audit.Head{{Workspace: "a", Last: b.recs[len(b.recs)-1].Link()}, {Workspace: "b"}}, nil
}

func (b brokenTrail) ListAudit(_ context.Context, f store.AuditFilter) ([]audit.Record, error) {
	if f.Workspace == "b" {
		return nil, errors.New("database down")
	}
	return b.recs, nil
}

// TestExportBrokenOff: an export that fails once it has begun is broken
// off, not ended as if whole; one that fails before is a problem.
func TestExportBrokenOff(t *testing.T) {
	t.Parallel()
	recs, err := audittest.Records("a", time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(New(nil, nil, nil, WithTrail(trail.New(brokenTrail{recs: recs}, trail.Config{}))), HandlerConfig{Log: zaptest.NewLogger(t)})
	w := httptest.NewRecorder()
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Errorf("the export ended with %v, want it broken off", v)
			}
		}()
		h.exportAudit(w, httptest.NewRequest("GET", adminapi.Prefix+"/audit-events/export", nil))
	}()
	if w.Body.Len() == 0 || w.Header().Get("Content-Type") != adminapi.ContentTypeNDJSON {
		t.Errorf("nothing was sent before the failure: %d bytes", w.Body.Len())
	}
	w = httptest.NewRecorder()
	if err := h.exportAudit(w, httptest.NewRequest("GET", adminapi.Prefix+"/audit-events/export?workspace=b", nil)); err == nil || w.Body.Len() != 0 {
		t.Errorf("a failure before anything was sent: %v, %d bytes sent", err, w.Body.Len())
	}
}

// TestVerifyBeforeTheFirstCheckpoint: with a checkpoints' bucket that
// holds none yet, GET /admin/v1/audit/verify answers 409 no_checkpoint, a
// problem whose member "trails" holds the chains verified, and records
// the verification; the fleet's status reads no checkpoint, and no error.
func TestVerifyBeforeTheFirstCheckpoint(t *testing.T) {
	t.Parallel()
	a := newAPIWith(t, trail.Config{Checkpoints: "file://" + t.TempDir()})
	a.do("operator", "POST", "/admin/v1/clients", map[string]string{"workspace_id": "w1"}).decode(t, 201, nil)
	r := a.do("auditor", "GET", "/admin/v1/audit/verify", nil)
	var answer struct {
		problem.Problem
		Trails []adminapi.TrailStatus `json:"trails"`
	}
	if r.status != 409 || r.problemCode() != problem.CodeNoCheckpoint || json.Unmarshal(r.body, &answer) != nil ||
		len(answer.Trails) != 1 || answer.Trails[0] != (adminapi.TrailStatus{Workspace: "w1", First: 1, Last: 1, Status: trail.StatusOK}) {
		t.Fatalf("verify: %d %s", r.status, r.body)
	}
	if got := a.actions(t, "operator", "/admin/v1/audit-events?action=audit_verify"); len(got) != 1 {
		t.Fatalf("the verification's records: %v", got)
	}
	var status adminapi.FleetStatus
	a.do("auditor", "GET", "/admin/v1/fleet/status", nil).decode(t, 200, &status)
	if status.Checkpoint != nil {
		t.Fatalf("the fleet's status: %+v", status)
	}
}
