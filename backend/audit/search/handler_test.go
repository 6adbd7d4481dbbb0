package search

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// fakeTrail records the filter it was asked for and answers recs or err.
type fakeTrail struct {
	store.Audit
	got  store.AuditFilter
	recs []audit.Record
	err  error
}

func (f *fakeTrail) ListAudit(_ context.Context, filter store.AuditFilter) ([]audit.Record, error) {
	f.got = filter
	return f.recs, f.err
}

func serve(t *testing.T, trail *fakeTrail, query string, grant string) *httptest.ResponseRecorder {
	t.Helper()
	return serveAs(t, trail, query, grant)
}

// serveStore serves the search of query over the trail of st, to a client
// of workspace alpha.
func serveStore(t *testing.T, st store.Audit, query string) *httptest.ResponseRecorder {
	t.Helper()
	return serveAs(t, st, query, "")
}

// serveAs serves the search of query over st, to a client of workspace
// alpha, logged in through grant when not "".
func serveAs(t *testing.T, st store.Audit, query string, grant string) *httptest.ResponseRecorder {
	t.Helper()
	h := New(st, nil)
	req := httptest.NewRequest("GET", contract.PathAuditEvents+query, nil)
	req.Header.Set(contract.HeaderClientID, "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b")
	req.Header.Set(contract.HeaderWorkspaceID, "alpha")
	if grant != "" {
		req.Header.Set(contract.HeaderGrantID, grant)
	}
	w := httptest.NewRecorder()
	web.RequireCaller(http.HandlerFunc(h.Search)).ServeHTTP(w, req)
	return w
}

func TestSearchAsksTheCallersWorkspace(t *testing.T) {
	trail := &fakeTrail{}
	w := serve(t, trail, "?_count=3&_cursor=7&agent=6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "")
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if trail.got.Workspace != "alpha" || trail.got.Limit != 4 || trail.got.After != 7 || trail.got.Agent == "" {
		t.Fatalf("filter %+v: want the caller's workspace, one more than _count, the cursor", trail.got)
	}
}

func TestSearchNextLink(t *testing.T) {
	var recs []audit.Record
	var last audit.Link
	for range 3 {
		r, err := audit.Next(last, audit.Event{At: time.Now(), Action: audit.Login, Outcome: audit.Success, Workspace: "alpha"})
		if err != nil {
			t.Fatal(err)
		}
		recs, last = append(recs, r), r.Link()
	}
	for _, tt := range []struct {
		count string
		n     int
		next  bool
	}{{"2", 3, true}, {"3", 3, false}} {
		w := serve(t, &fakeTrail{recs: recs[:tt.n]}, "?_count="+tt.count, "")
		body := w.Body.String()
		if hasNext := contains(body, `"relation":"next"`); hasNext != tt.next || (tt.next && !contains(body, "_cursor=2")) {
			t.Fatalf("_count=%s over %d records: %s", tt.count, tt.n, body)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestSearchRefusals(t *testing.T) {
	w := serve(t, &fakeTrail{}, "", "11111111-2222-4333-8444-555555555555")
	testkit.WantProblem(t, w.Code, w.Header(), w.Body.Bytes(), 403, "forbidden")
	w = serve(t, &fakeTrail{}, "?_count=x", "")
	testkit.WantProblem(t, w.Code, w.Header(), w.Body.Bytes(), 400, "invalid_request")
	w = serve(t, &fakeTrail{err: errors.New("database down")}, "", "")
	testkit.WantProblem(t, w.Code, w.Header(), w.Body.Bytes(), 500, "internal_error")
}
