package search

import (
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/store"
)

// Ids of the sample records, as search values.
const (
	tClient = audittest.Client
	tCare   = audittest.CareContext
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestParse(t *testing.T) {
	tests := []struct {
		query string
		want  store.AuditFilter
	}{
		{"", store.AuditFilter{Limit: 50}},
		{"date=ge2026-11-01", store.AuditFilter{Since: day(2026, 11, 1), Limit: 50}},
		{"date=le2026-11-22", store.AuditFilter{Until: day(2026, 11, 23), Limit: 50}},
		{"date=lt2026-11-22", store.AuditFilter{Until: day(2026, 11, 22), Limit: 50}},
		{"date=gt2026-11-22", store.AuditFilter{Since: day(2026, 11, 23), Limit: 50}},
		{"date=2026-11-22", store.AuditFilter{Since: day(2026, 11, 22), Until: day(2026, 11, 23), Limit: 50}},
		{"date=eq2026-11", store.AuditFilter{Since: day(2026, 11, 1), Until: day(2026, 12, 1), Limit: 50}},
		{"date=ge2026", store.AuditFilter{Since: day(2026, 1, 1), Limit: 50}},
		{"date=ge2026-11-01&date=le2026-11-30", store.AuditFilter{Since: day(2026, 11, 1), Until: day(2026, 12, 1), Limit: 50}},
		{"date=ge2026-11-01&date=ge2026-11-10", store.AuditFilter{Since: day(2026, 11, 10), Limit: 50}},
		{"date=le2026-11-30&date=le2026-11-10", store.AuditFilter{Until: day(2026, 11, 11), Limit: 50}},
		{"date=ge2026-11-22T10:30:00Z", store.AuditFilter{Since: time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC), Limit: 50}},
		{"date=le2026-11-22T10:30:00Z", store.AuditFilter{Until: time.Date(2026, 11, 22, 10, 30, 1, 0, time.UTC), Limit: 50}},
		{"date=le2026-11-22T10:30Z", store.AuditFilter{Until: time.Date(2026, 11, 22, 10, 31, 0, 0, time.UTC), Limit: 50}},
		{"date=2026-11-22T10:30%2B00:00", store.AuditFilter{Since: time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC), Until: time.Date(2026, 11, 22, 10, 31, 0, 0, time.UTC), Limit: 50}},
		{"date=le2026-11-22T10:30:00.5Z", store.AuditFilter{Until: time.Date(2026, 11, 22, 10, 30, 0, 600_000_000, time.UTC), Limit: 50}},
		{"date=ge2026-11-22T16:00:00%2B05:30", store.AuditFilter{Since: time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC), Limit: 50}},
		{"date=ge2026-11-22T16:00:00+05:30", store.AuditFilter{Since: time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC), Limit: 50}},
		{"entity=" + tCare, store.AuditFilter{Entity: tCare, Limit: 50}},
		{"agent=" + tClient, store.AuditFilter{Agent: tClient, Limit: 50}},
		{"agent=alice@example.org", store.AuditFilter{Agent: "alice@example.org", Limit: 50}},
		{"_count=1", store.AuditFilter{Limit: 1}},
		{"_count=200", store.AuditFilter{Limit: 200}},
		{"_count=10&_cursor=42", store.AuditFilter{Limit: 10, After: 42}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(q)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got := s.Filter; !got.Since.Equal(tt.want.Since) || !got.Until.Equal(tt.want.Until) ||
				got.Entity != tt.want.Entity || got.Agent != tt.want.Agent || got.Limit != tt.want.Limit ||
				got.After != tt.want.After || got.Workspace != "" {
				t.Fatalf("filter %+v, want %+v", got, tt.want)
			}
			if s.Query.Has(CursorParam) {
				t.Fatal("the cursor is in the search's query")
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct{ query, want string }{
		{"date=", "empty"},
		{"date=yesterday", "a date must be"},
		{"date=2026-13-01", "a date must be"},
		{"date=2026-02-30", "does not exist"},
		{"date=2026-11-22T10:30", "a date must be"},
		{"date=2026-11-22T10Z", "a date must be"},
		{"date=2026-11-22T10:30:00.1234567890Z", "a date must be"},
		{"date=2026-11-22T10:30:00", "a date must be"},
		{"date=ne2026-11-22", "prefix"},
		{"date=sa2026-11-22", "prefix"},
		{"date=ge2026-11-01&date=bogus", "a date must be"},
		{"entity=record-1", "care_context_id"},
		{"entity=" + tCare + "&entity=" + tCare, "only once"},
		{"agent=alice%20smith", "person's name"},
		{"agent=" + strings.Repeat("a", 65), "person's name"},
		{"_count=0", "_count"},
		{"_count=201", "_count"},
		{"_count=ten", "_count"},
		{"_count=-1", "_count"},
		{"_cursor=0", "cursor"},
		{"_cursor=abc", "cursor"},
		{"_cursor=007", "cursor"},
		{"_cursor=1&_cursor=2", "only once"},
		{"patient=x", "unknown search parameter"},
		{"_sort=date", "unknown search parameter"},
		{"date:missing=true", "unknown search parameter"},
		{strings.Repeat("x", 100) + "=1", "unknown search parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.query[:min(len(tt.query), 50)], func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(q)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if len(err.Error()) > 300 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
		})
	}
}

func TestLinks(t *testing.T) {
	q, _ := url.ParseQuery("agent=" + tClient + "&_count=2&_cursor=4")
	s, err := Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	self, next := s.Links(6, true)
	if want := "/health/api/v1/fhir/AuditEvent?_count=2&_cursor=4&agent=" + tClient; self != want {
		t.Errorf("self = %s, want %s", self, want)
	}
	if want := "/health/api/v1/fhir/AuditEvent?_count=2&_cursor=6&agent=" + tClient; next != want {
		t.Errorf("next = %s, want %s", next, want)
	}
	if _, next := s.Links(6, false); next != "" {
		t.Errorf("next = %s on the last page", next)
	}
	if self, _ := (Params{}).Links(0, false); self != "/health/api/v1/fhir/AuditEvent" {
		t.Errorf("self = %s", self)
	}
	// A next link parses back to the same search, one page on.
	u, _ := url.Parse(next)
	s2, err := Parse(u.Query())
	if err != nil || s2.Filter.After != 6 || s2.Filter.Agent != tClient || s2.Filter.Limit != 2 {
		t.Fatalf("the next link parses to %+v, %v", s2.Filter, err)
	}
}

// FuzzParse: a query string from anyone is parsed without
// panicking; what is accepted is a consistent filter whose links parse
// back to it, and what is refused has a short error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "date=ge2026-11-01&date=le2026-11-30", "entity=" + tCare, "agent=" + tClient,
		"_count=5&_cursor=9", "date=2026-11-22T10:30:00.123456789%2B14:00", "date=lt0001", "date=gt9999-12-31T23:59:59Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		s, err := Parse(q)
		if err != nil {
			if len(err.Error()) > 300 || !utf8.ValidString(err.Error()) && utf8.ValidString(raw) {
				t.Fatalf("error %q", err)
			}
			return
		}
		if s.Filter.Limit < 1 || s.Filter.Limit > MaxCount || s.Filter.After < 0 || s.Filter.Workspace != "" {
			t.Fatalf("filter %+v", s.Filter)
		}
		self, next := s.Links(s.Filter.After+1, true)
		for _, link := range []string{self, next} {
			u, err := url.Parse(link)
			if err != nil {
				t.Fatalf("link %q: %v", link, err)
			}
			back, err := Parse(u.Query())
			if err != nil {
				t.Fatalf("link %q refused: %v", link, err)
			}
			if !back.Filter.Since.Equal(s.Filter.Since) || !back.Filter.Until.Equal(s.Filter.Until) ||
				back.Filter.Entity != s.Filter.Entity || back.Filter.Agent != s.Filter.Agent || back.Filter.Limit != s.Filter.Limit {
				t.Fatalf("link %q parses to %+v, not %+v", link, back.Filter, s.Filter)
			}
		}
	})
}
