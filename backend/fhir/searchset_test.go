package fhir

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSearchset: a page is a searchset Bundle without a total, linked to
// itself and, unless it is the last, to the next page, its links not
// HTML-escaped; each match an entry whose fullUrl is its id's URN, in
// search mode match.
func TestSearchset(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	matches := []Match{
		{ID: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", Resource: map[string]string{"resourceType": "Basic"}},
		{ID: "12345678-1234-4234-8234-123456789abc", Resource: map[string]string{"resourceType": "Basic"}},
	}
	for _, tt := range []struct {
		name       string
		matches    []Match
		self, next string
	}{
		{"empty last page", nil, "/s", ""},
		{"a page with a next", matches, "/s?_count=2", "/s?_count=2&_cursor=2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Searchset(tt.matches, tt.self, tt.next, at)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), `\u0026`) || strings.HasSuffix(string(data), "\n") {
				t.Fatalf("links HTML-escaped or a trailing newline: %s", data)
			}
			var b struct {
				ResourceType, Type, Timestamp string
				Total                         *int
				Link                          []struct{ Relation, URL string }
				Entry                         []struct {
					FullURL string
					Search  struct{ Mode string }
				}
			}
			if err := json.Unmarshal(data, &b); err != nil {
				t.Fatal(err)
			}
			if b.ResourceType != "Bundle" || b.Type != "searchset" || b.Total != nil || b.Timestamp != "2026-11-22T10:30:00.000Z" {
				t.Fatalf("bundle header %s", data)
			}
			want := []string{"self", tt.self}
			if tt.next != "" {
				want = append(want, "next", tt.next)
			}
			var got []string
			for _, l := range b.Link {
				got = append(got, l.Relation, l.URL)
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("links %v, want %v", got, want)
			}
			if len(b.Entry) != len(tt.matches) {
				t.Fatalf("%d entries, want %d", len(b.Entry), len(tt.matches))
			}
			for i, e := range b.Entry {
				if e.FullURL != "urn:uuid:"+tt.matches[i].ID || e.Search.Mode != "match" {
					t.Fatalf("entry %d: %+v", i, e)
				}
			}
		})
	}
}
