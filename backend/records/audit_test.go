package records

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/contract"
)

// failingAudit is a trail whose writes fail.
type failingAudit struct{ store.Audit }

func (failingAudit) AppendAudit(context.Context, audit.Event) (audit.Record, error) {
	return audit.Record{}, errors.New("the trail is unavailable")
}

// seedRecord creates a client of workspace w1 and a pending record of it
// with care context id cc in st, and returns the client's id.
func seedRecord(tb testing.TB, st store.Store, cc string) string {
	tb.Helper()
	creds, err := identity.New(st, 1).CreateClient(tb.Context(), audittest.Operator, "w1", identity.Meta{})
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now()
	rec := store.Record{ID: "0f9e8d7c-6b5a-4493-8827-1a2b3c4d5e04", CareContextID: cc, WorkspaceID: "w1", ClientID: creds.ClientID,
		BlobKey: "ab", SHA1: make([]byte, 20), Size: 1, ContentType: "text/plain", Title: "a", Status: store.RecordPending,
		Version: 1, CreatedAt: now, UpdatedAt: now}
	if err := st.CreateRecord(tb.Context(), rec, audit.Event{At: now, Action: audit.RecordUpload, Outcome: audit.Success, Workspace: "w1"}); err != nil {
		tb.Fatal(err)
	}
	return creds.ClientID
}

// retrieveAs serves a retrieval of cc by client of w1 with h, as the
// backend's route does (the caller from the edge's headers).
func retrieveAs(h *Handler, client, cc string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", "/?identifier="+cc, nil)
	r.Header.Set(contract.HeaderClientID, client)
	r.Header.Set(contract.HeaderWorkspaceID, "w1")
	w := httptest.NewRecorder()
	web.RequireCaller(http.HandlerFunc(h.Retrieve)).ServeHTTP(w, r)
	return w
}

// TestRetrieveUnaudited: a retrieval whose record cannot be written is
// not answered with the document, nor is a refused one with 404.
func TestRetrieveUnaudited(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const cc = "9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"
	client := seedRecord(t, st, cc)
	for _, tt := range []struct {
		name  string
		trail store.Audit
		cc    string
		code  int
	}{
		{"audited", st, cc, 200},
		{"audited refusal", st, "0a0a0a0a-0a0a-4a0a-8a0a-0a0a0a0a0a0a", 404},
		{"unaudited", failingAudit{st}, cc, 500},
		{"unaudited refusal", failingAudit{st}, "0a0a0a0a-0a0a-4a0a-8a0a-0a0a0a0a0a0a", 500},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(Config{Store: st, Audit: tt.trail, Log: zap.NewNop(), Metrics: prometheus.NewRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			w := retrieveAs(h, client, tt.cc)
			if w.Code != tt.code || tt.code != 200 && strings.Contains(w.Body.String(), "Bundle") {
				t.Fatalf("retrieve: %d %s", w.Code, w.Body)
			}
		})
	}
	rs, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1", Agent: client})
	if err != nil {
		t.Fatal(err)
	}
	rs = append([]audit.Record{{}}, rs...)
	if len(rs) != 3 || rs[1].Action != audit.RecordRetrieve || rs[1].Outcome != audit.Success ||
		rs[2].Action != audit.RecordRetrieve || rs[2].Outcome != audit.Denied {
		t.Fatalf("trail = %+v", rs)
	}
}
