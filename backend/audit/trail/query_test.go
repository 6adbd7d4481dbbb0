package trail

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestParseQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want Query // compared when err is ""
		err  string
	}{
		{"", Query{}, ""},
		{"workspace=", Query{Scoped: true}, ""},
		{"workspace=acme&agent=alice@example.org&action=audit_search&limit=5",
			Query{Workspace: "acme", Scoped: true, Agent: "alice@example.org", Action: "audit_search", Limit: 5}, ""},
		{"since=2026-03-15&until=2026-03-15", Query{Since: time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC),
			Until: time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)}, ""},
		{"entity=k_2:old", Query{Entity: "k_2:old"}, ""},
		{"order=newest", Query{Newest: true}, ""},
		{"order=oldest", Query{}, ""},
		{"order=random", Query{}, "order must be oldest or newest"},
		{"page=2", Query{}, "unknown parameter"},
		{"agent=a&agent=b", Query{}, "only once"},
		{"since=yesterday", Query{}, "since: want a date"},
		{"until=10000-01-01", Query{}, "until: want a date"},
		{"limit=1001", Query{}, "from 1 to 1000"},
		{"limit=99999999999", Query{}, "from 1 to 1000"},
		{"limit=99999999999999999999", Query{}, "from 1 to 1000"},
		{"limit=0", Query{}, "limit"},
		{"limit=01", Query{}, "limit"},
		{"workspace=a/b", Query{}, "workspace"},
		{"agent=alice%20smith", Query{}, "agent"},
		{"entity=%3Cscript%3E", Query{}, "entity"},
		{"action=drop_table", Query{}, "action"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			v, _ := url.ParseQuery(tt.raw)
			q, err := ParseQuery(v)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("%v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("error %v, want %q", err, tt.err)
			case tt.err == "" && !same(q, tt.want):
				t.Fatalf("%+v, want %+v", q, tt.want)
			}
		})
	}
}

// TestValidateLimit: a query made in code (direct mode's export) is held
// to the limits of a parsed one.
func TestValidateLimit(t *testing.T) {
	t.Parallel()
	for limit, ok := range map[int]bool{-1: false, 0: true, 1: true, MaxLimit: true, MaxLimit + 1: false, 99999999999: false} {
		if err := (Query{Limit: limit}).Validate(); (err == nil) != ok {
			t.Errorf("limit %d: %v, want accepted %v", limit, err, ok)
		}
	}
}

// same reports whether two queries select the same.
func same(a, b Query) bool {
	return a.Workspace == b.Workspace && a.Scoped == b.Scoped && a.Agent == b.Agent && a.Entity == b.Entity &&
		a.Action == b.Action && a.Since.Equal(b.Since) && a.Until.Equal(b.Until) && a.Newest == b.Newest && a.Cursor == b.Cursor && a.Limit == b.Limit
}

// FuzzParseQuery: whatever the query, ParseQuery returns a valid query
// within bounds or an error, and what it accepts its Values give back.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "workspace=", "workspace=acme&since=2026-03-15&until=2026-03-16T10:00:00%2B05:30",
		"agent=alice@example.org&action=login&limit=2", "cursor=eyJ3IjoiIiwicyI6MSwidCI6MX0", "a=1&a=2", "since=0001-01-01T00:00:00%2B01:00",
		"order=newest&limit=3", "order=oldest", "order=Newest"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := ParseQuery(v)
		if err != nil {
			return
		}
		if q.Validate() != nil || q.Limit < 0 || q.Limit > MaxLimit {
			t.Fatalf("%q: accepted %+v", raw, q)
		}
		again, err := ParseQuery(q.Values())
		if err != nil || !same(again, q) {
			t.Fatalf("%q: %+v, again %+v, %v", raw, q, again, err)
		}
	})
}

// FuzzCursor: a cursor the caller made up is refused or read, never
// panics, and what is read encodes back to itself.
func FuzzCursor(f *testing.F) {
	f.Add(position{Workspace: "acme", Seq: 3, Began: 1}.encode())
	f.Add("AAAA")
	f.Add("")
	f.Fuzz(func(t *testing.T, cursor string) {
		p, err := decodePosition(Query{Cursor: cursor}, time.Unix(1, 0))
		if err != nil || cursor == "" {
			return
		}
		again, err := decodePosition(Query{Cursor: p.encode()}, time.Unix(1, 0))
		if err != nil || again != p {
			t.Fatalf("%q: %+v, again %+v, %v", cursor, p, again, err)
		}
	})
}
