package trail

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Ids of the seeded trails.
const (
	clientA = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
	clientB = "6b2dab63-4c8f-4e1f-8054-3f9f2d7c8b02"
	care    = "9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"
)

// seeded is a store holding acme's four records (one an operator's
// change, alice's), globex's one and the installation's one, and its file.
func seeded(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hdc.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	record := audit.Entity{Kind: audit.EntityCareContext, ID: care}
	for _, e := range []audit.Event{
		{At: day(14, 10), Action: audit.Login, Outcome: audit.Success, Workspace: "acme", Client: clientA},
		{At: day(15, 10), Action: audit.RecordRetrieve, Outcome: audit.Success, Workspace: "acme", Client: clientB, Entity: record},
		{At: day(16, 10), Action: audit.RecordRetrieve, Outcome: audit.Denied, Workspace: "acme", Client: clientA, Entity: record},
		{At: day(17, 10), Action: audit.ClientCreate, Outcome: audit.Success, Workspace: "acme",
			Entity: audit.Entity{Kind: audit.EntityClient, ID: clientB}, Person: audittest.Operator},
		{At: day(15, 12), Action: audit.Login, Outcome: audit.Success, Workspace: "globex", Client: clientB},
		{At: day(14, 11), Action: audit.LoginFailed, Outcome: audit.Denied},
	} {
		if _, err := st.AppendAudit(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	return st, path
}

// searchAll returns the workspace/seq of every record q selects, paging
// with q's limit, and the number of pages.
func searchAll(t *testing.T, ctx context.Context, s *Service, q Query) ([]string, int) {
	t.Helper()
	var got []string
	pages := 0
	for {
		p, err := s.Search(ctx, q)
		if err != nil {
			t.Fatalf("Search(%+v): %v", q, err)
		}
		pages++
		for _, item := range p.Items {
			r := listed(t, item)
			got = append(got, fmt.Sprintf("%s/%d", r.Workspace, r.Seq))
		}
		if p.Next == "" {
			return got, pages
		}
		if pages > 100 {
			t.Fatal("the search does not end")
		}
		q.Cursor = p.Next
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	st, _ := seeded(t)
	s := New(st, Config{})
	at := func(s string) time.Time { tm, _ := ParseTime(s, false); return tm }
	tests := []struct {
		name string
		q    Query
		want []string
	}{
		{"every trail", Query{}, []string{"/1", "acme/1", "acme/2", "acme/3", "acme/4", "globex/1"}},
		{"one workspace", Query{Workspace: "acme", Scoped: true}, []string{"acme/1", "acme/2", "acme/3", "acme/4"}},
		{"the installation's", Query{Scoped: true}, []string{"/1"}},
		{"unknown workspace", Query{Workspace: "nowhere", Scoped: true}, nil},
		{"a client, across trails", Query{Agent: clientB}, []string{"acme/2", "globex/1"}},
		{"a person's changes", Query{Agent: audittest.Operator.Name}, []string{"acme/4"}},
		{"an entity", Query{Entity: care}, []string{"acme/2", "acme/3"}},
		{"an action", Query{Action: audit.Login}, []string{"acme/1", "globex/1"}},
		{"since and until", Query{Since: at("2026-03-15"), Until: at("2026-03-16")}, []string{"acme/2", "globex/1"}},
		{"an action, a page of one", Query{Action: audit.RecordRetrieve, Limit: 1}, []string{"acme/2", "acme/3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, _ := searchAll(t, t.Context(), s, tt.q); !slices.Equal(got, tt.want) {
				t.Errorf("%+v: %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

// TestSearchNewest: newest first, every trail's records come together by
// time, a page at a time as whole, whatever the filter; a cursor of the
// other order is refused.
func TestSearchNewest(t *testing.T) {
	t.Parallel()
	st, _ := seeded(t)
	s := New(st, Config{})
	at := func(s string) time.Time { tm, _ := ParseTime(s, false); return tm }
	for _, tt := range []struct {
		name string
		q    Query
		want []string
	}{
		{"every trail", Query{}, []string{"acme/4", "acme/3", "globex/1", "acme/2", "/1", "acme/1"}},
		{"one workspace", Query{Workspace: "acme", Scoped: true}, []string{"acme/4", "acme/3", "acme/2", "acme/1"}},
		{"a client, across trails", Query{Agent: clientB}, []string{"globex/1", "acme/2"}},
		{"an action", Query{Action: audit.Login}, []string{"globex/1", "acme/1"}},
		{"since and until", Query{Since: at("2026-03-15"), Until: at("2026-03-16")}, []string{"globex/1", "acme/2"}},
	} {
		for _, limit := range []int{0, 1, 2, 5} {
			q := tt.q
			q.Newest, q.Limit = true, limit
			if got, _ := searchAll(t, t.Context(), s, q); !slices.Equal(got, tt.want) {
				t.Errorf("%s, pages of %d: %v, want %v", tt.name, limit, got, tt.want)
			}
		}
	}
	oldest, err := s.Search(t.Context(), Query{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(t.Context(), Query{Newest: true, Cursor: oldest.Next}); err == nil {
		t.Error("a cursor of the oldest first was taken newest first")
	}
}

// TestSearchNewestTies: records of several trails at one time come
// newest first by workspace, then each trail's newest seq first, across
// pages of one as in one page.
func TestSearchNewestTies(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	noon, early := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 15, 11, 0, 0, 0, time.UTC)
	for _, e := range []audit.Event{
		{At: noon, Workspace: "globex"}, {At: noon, Workspace: "acme"}, {At: early, Workspace: "acme"},
		{At: noon, Workspace: "acme"}, {At: noon}, {At: early, Workspace: "globex"},
	} {
		e.Action, e.Outcome = audit.LoginFailed, audit.Denied
		if _, err := st.AppendAudit(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	s := New(st, Config{})
	want := []string{"/1", "acme/3", "acme/1", "globex/1", "acme/2", "globex/2"}
	for _, limit := range []int{0, 1, 2, 4} {
		if got, _ := searchAll(t, t.Context(), s, Query{Newest: true, Limit: limit}); !slices.Equal(got, want) {
			t.Errorf("pages of %d: %v, want %v", limit, got, want)
		}
	}
}

// TestSearchNewestBreak: newest first, a record whose row was altered ends
// the reading with its break where it stands among the trails: the search
// fails naming it, the export after writing the records newer than it.
func TestSearchNewestBreak(t *testing.T) {
	t.Parallel()
	st, path := seeded(t)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE audit_records SET client_id = NULL WHERE workspace_id = 'acme' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	s := New(st, Config{})
	var b *audit.Break
	if _, err := s.Search(t.Context(), Query{Newest: true}); !errors.As(err, &b) || b.Workspace != "acme" || b.Seq != 2 {
		t.Fatalf("the search: %v, want acme's break at 2", err)
	}
	var out strings.Builder
	err = s.Export(t.Context(), Query{Newest: true}, &out)
	if lines := strings.Count(out.String(), "\n"); !errors.As(err, &b) || b.Workspace != "acme" || b.Seq != 2 || lines != 3 {
		t.Fatalf("the export: %d lines, %v; want acme/4, acme/3 and globex/1, then acme's break at 2", lines, err)
	}
}

// TestSearchPages: a page at a time, across trails, the search gives what
// one page gives, and ends though records are appended while it pages.
func TestSearchPages(t *testing.T) {
	t.Parallel()
	st, _ := seeded(t)
	s := New(st, Config{})
	whole, _ := searchAll(t, t.Context(), s, Query{})
	for _, limit := range []int{1, 2, 5} {
		got, pages := searchAll(t, t.Context(), s, Query{Limit: limit})
		if !slices.Equal(got, whole) || pages != (len(whole)+limit-1)/limit {
			t.Errorf("limit %d: %v in %d pages, want %v", limit, got, pages, whole)
		}
	}
	// A person's pages of one, each recorded in the trail it reads: the
	// search still ends, without its own records.
	ctx := audit.WithPerson(t.Context(), audittest.Auditor)
	got, _ := searchAll(t, ctx, s, Query{Workspace: "acme", Scoped: true, Limit: 1})
	if want := []string{"acme/1", "acme/2", "acme/3", "acme/4"}; !slices.Equal(got, want) {
		t.Errorf("the auditor's pages of one: %v, want %v", got, want)
	}
	first, err := s.Search(t.Context(), Query{Workspace: "acme", Scoped: true, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(t.Context(), Query{Workspace: "globex", Scoped: true, Cursor: first.Next}); err == nil {
		t.Error("a cursor of acme's trail was taken for globex's")
	}
}

// TestReadsRecorded: a search, an export and a verification made for a
// person of the API are each recorded, in the trail read or the
// installation's, and found by the person's name; hdc's direct mode and
// a call without a person record nothing.
func TestReadsRecorded(t *testing.T) {
	t.Parallel()
	st, _ := seeded(t)
	s := New(st, Config{})
	for _, ctx := range []context.Context{t.Context(), audit.WithPerson(t.Context(), audittest.Direct)} {
		if _, err := s.Search(ctx, Query{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := audit.WithPerson(t.Context(), audittest.Auditor)
	if _, err := s.Search(ctx, Query{Workspace: "acme", Scoped: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Export(ctx, Query{Workspace: "nowhere", Scoped: true}, &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := s.Search(t.Context(), Query{Agent: audittest.Auditor.Name})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, item := range p.Items {
		got = append(got, string(item[:strings.Index(string(item), `,"prev"`)])+" "+actionOf(t, item))
	}
	want := []string{
		`{"v":1,"workspace":"","seq":2 audit_export workspace:nowhere`,
		`{"v":1,"workspace":"","seq":3 audit_verify :`,
		`{"v":1,"workspace":"acme","seq":5 audit_search workspace:acme`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("the auditor's records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// listed returns the record of a search's item: its canonical form
// without the hash member.
func listed(t *testing.T, item []byte) audit.Record {
	t.Helper()
	i := strings.LastIndex(string(item), `,"hash":"`)
	if i < 0 || !strings.HasSuffix(string(item), `"}`) {
		t.Fatalf("item %s has no hash last", item)
	}
	r, err := audit.Parse(append(item[:i:i], '}'))
	if err != nil {
		t.Fatalf("item %s: %v", item, err)
	}
	return r
}

// actionOf returns the action and entity of a listed record, which must
// name the auditor.
func actionOf(t *testing.T, item []byte) string {
	t.Helper()
	r := listed(t, item)
	if r.Person != audittest.Auditor {
		t.Errorf("record %d names %+v", r.Seq, r.Person)
	}
	return fmt.Sprintf("%s %s:%s", r.Action, r.Entity.Kind, r.Entity.ID)
}

// refusing is a trail that refuses every record.
type refusing struct{ store.Audit }

func (refusing) AppendAudit(context.Context, audit.Event) (audit.Record, error) {
	return audit.Record{}, errors.New("audit disk full")
}

// TestReadFailsUnrecorded: when the record of a person's read cannot be
// written, the read fails, and an export writes nothing.
func TestReadFailsUnrecorded(t *testing.T) {
	t.Parallel()
	st, _ := seeded(t)
	s := New(refusing{st}, Config{})
	ctx := audit.WithPerson(t.Context(), audittest.Auditor)
	var out strings.Builder
	errs := map[string]error{"export": s.Export(ctx, Query{}, &out)}
	_, errs["search"] = s.Search(ctx, Query{})
	_, errs["verify"] = s.Verify(ctx)
	for what, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "audit disk full") {
			t.Errorf("%s: %v, want the trail's refusal", what, err)
		}
	}
	if out.Len() != 0 {
		t.Errorf("the export wrote %q", out.String())
	}
	if _, err := s.Search(t.Context(), Query{}); err != nil {
		t.Errorf("a search without a person, which records nothing: %v", err)
	}
}

// TestExport: one AuditEvent a line, the records a search selects, at
// most the limit.
func TestExport(t *testing.T) {
	t.Parallel()
	st, _ := seeded(t)
	s := New(st, Config{})
	tests := []struct {
		q     Query
		lines int
	}{
		{Query{}, 6},
		{Query{Workspace: "acme", Scoped: true, Entity: care}, 2},
		{Query{Limit: 4}, 4},
		{Query{Action: audit.LoginFailed}, 1},
		{Query{Newest: true, Limit: 4}, 4},
	}
	for _, tt := range tests {
		var out strings.Builder
		if err := s.Export(t.Context(), tt.q, &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != tt.lines || !strings.HasPrefix(lines[0], `{"resourceType":"AuditEvent"`) {
			t.Errorf("%+v: %d lines, want %d:\n%s", tt.q, len(lines), tt.lines, out.String())
		}
	}
}

// TestVerify: an intact store verifies; a record deleted behind the
// store's back is the first break, named.
func TestVerify(t *testing.T) {
	t.Parallel()
	st, path := seeded(t)
	s := New(st, Config{Retention: 24 * time.Hour})
	r, err := s.Verify(t.Context())
	if err != nil || broken(r) || len(r.Trails) != 3 || r.Checkpoint != nil {
		t.Fatalf("intact: %+v, %v", r, err)
	}
	if got := r.Trails[1]; got != (Status{Workspace: "acme", First: 1, Last: 4, Status: StatusOK}) {
		t.Errorf("acme's status: %+v", got)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM audit_records WHERE workspace_id = 'acme' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	r, err = s.Verify(t.Context())
	if err != nil || r.Trails[1].Status != StatusBroken || r.Trails[1].Seq != 2 || r.Trails[1].Reason == "" ||
		r.Trails[0].Status != StatusOK || r.Trails[2].Status != StatusOK {
		t.Fatalf("a record deleted: %+v, %v", r, err)
	}
}

// broken reports whether a trail of r is broken.
func broken(r Report) bool {
	return slices.ContainsFunc(r.Trails, func(s Status) bool { return s.Status != StatusOK })
}

// TestVerifyBeforeTheFirstCheckpoint: with a checkpoints' bucket that
// holds none yet, Verify verifies the chains alone and returns their
// report with the problem no_checkpoint (409), which names the bucket;
// the verification is recorded, and a break is still in the report.
// LastCheckpoint reads no checkpoint, and no error.
func TestVerifyBeforeTheFirstCheckpoint(t *testing.T) {
	t.Parallel()
	st, path := seeded(t)
	s := New(st, Config{Checkpoints: "file://" + t.TempDir(), Retention: 24 * time.Hour})
	ctx := audit.WithPerson(t.Context(), audittest.Auditor)
	r, err := s.Verify(ctx)
	var p *problem.Problem
	if !errors.As(err, &p) || p.Code != problem.CodeNoCheckpoint || p.Status != 409 || !strings.Contains(p.Detail, "no checkpoint in file:///") ||
		broken(r) || len(r.Trails) != 3 || r.Checkpoint != nil {
		t.Fatalf("Verify: %+v, %v", r, err)
	}
	if page, err := s.Search(t.Context(), Query{Agent: audittest.Auditor.Name, Action: audit.AuditVerify}); err != nil || len(page.Items) != 1 {
		t.Fatalf("the verification's record: %d, %v", len(page.Items), err)
	}
	if at, err := s.LastCheckpoint(t.Context()); at != nil || err != nil {
		t.Fatalf("LastCheckpoint: %+v, %v", at, err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM audit_records WHERE workspace_id = 'acme' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Verify(ctx); !errors.As(err, &p) || p.Code != problem.CodeNoCheckpoint || !broken(r) || r.Trails[1].Seq != 2 {
		t.Fatalf("a record deleted: %+v, %v", r, err)
	}
}
