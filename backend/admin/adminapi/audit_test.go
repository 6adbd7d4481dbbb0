package adminapi

import (
	"testing"

	"github.com/health-data-connect/hdc/internal/problem"
)

// TestReportErr: a report's first break is its error, naming the trail,
// the record and the reason; a report without one has none.
func TestReportErr(t *testing.T) {
	t.Parallel()
	ok := AuditReport{Trails: []TrailStatus{{Workspace: "", First: 1, Last: 2, Status: TrailOK}}}
	if err := ok.Err(); err != nil {
		t.Fatalf("an intact report: %v", err)
	}
	for _, tt := range []struct{ ws, want string }{
		{"acme", `the audit trail of workspace "acme" breaks at record 2: the link does not hold`},
		{"", `the audit trail of the installation (workspace "") breaks at record 2: the link does not hold`},
	} {
		r := AuditReport{Trails: []TrailStatus{{Workspace: "a", Status: TrailOK},
			{Workspace: tt.ws, Status: TrailBroken, Seq: 2, Reason: "the link does not hold"}, {Workspace: "z", Status: TrailBroken, Seq: 9}}}
		if err := r.Err(); err == nil || err.Error() != tt.want {
			t.Errorf("Err() = %v, want %s", err, tt.want)
		}
	}
}

// TestAsNoCheckpoint: the problem no_checkpoint is found however wrapped;
// another problem, or another error, is not it.
func TestAsNoCheckpoint(t *testing.T) {
	t.Parallel()
	none := problem.New(409, problem.CodeNoCheckpoint, "no checkpoint in file:///x yet")
	if p := AsNoCheckpoint(&wrapped{none}); p != none {
		t.Fatalf("wrapped: %v", p)
	}
	if p := AsNoCheckpoint(problem.New(409, problem.CodeConflict, "x")); p != nil {
		t.Fatalf("another problem: %v", p)
	}
	if p := AsNoCheckpoint(nil); p != nil {
		t.Fatalf("nil: %v", p)
	}
}

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "verify: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

// TestAuditQueryValues: a query's parameters are what it holds; the
// workspace is given, empty too, only when scoped.
func TestAuditQueryValues(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		q    AuditQuery
		want string
	}{
		{AuditQuery{}, ""},
		{AuditQuery{Scoped: true}, "workspace="},
		{AuditQuery{Workspace: "w1"}, ""},
		{AuditQuery{Workspace: "w1", Scoped: true, Agent: "a@b", Entity: "e", Action: "key_add", Since: "2026-03-15", Until: "2026-03-16T00:00:00Z",
			Cursor: "c", Limit: 5}, "action=key_add&agent=a%40b&cursor=c&entity=e&limit=5&since=2026-03-15&until=2026-03-16T00%3A00%3A00Z&workspace=w1"},
	} {
		if got := tt.q.Values().Encode(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.q, got, tt.want)
		}
	}
}
