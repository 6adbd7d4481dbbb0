package fhirtest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/fhir"
	"github.com/health-data-connect/hdc/backend/store"
)

// TestCheckDocumentFails proves the checker can fail: each mutation of a
// valid document must be reported with the rule it breaks.
func TestCheckDocumentFails(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	valid, err := fhir.Document(store.Record{
		ID: "r1", CareContextID: "cc1", WorkspaceID: "w", SHA1: bytes.Repeat([]byte{1}, 20), Size: 1,
		ContentType: "audio/wave", Title: "t", Version: 1, CreatedAt: now, UpdatedAt: now,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckDocument(valid); err != nil {
		t.Fatalf("valid document rejected: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(b map[string]any)
		want   string
	}{
		{"no identifier", func(b map[string]any) { delete(b, "identifier") }, "bdl-9"},
		{"no timestamp", func(b map[string]any) { delete(b, "timestamp") }, "bdl-10"},
		{"total", func(b map[string]any) { b["total"] = 1 }, "bdl-1"},
		{"request", func(b map[string]any) { entry(b, 1)["request"] = map[string]any{} }, "bdl-2/3/4"},
		{"composition not first", func(b map[string]any) {
			e := b["entry"].([]any)
			e[0], e[1] = e[1], e[0]
		}, "bdl-11"},
		{"duplicate fullUrl", func(b map[string]any) {
			b["entry"] = append(b["entry"].([]any), b["entry"].([]any)[1])
		}, "bdl-7"},
		{"bad status", func(b map[string]any) { comp(b)["status"] = "draft" }, "Composition.status"},
		{"no title", func(b map[string]any) { delete(comp(b), "title") }, "Composition.title"},
		{"no author", func(b map[string]any) { delete(comp(b), "author") }, "Composition.author"},
		{"no date", func(b map[string]any) { delete(comp(b), "date") }, "Composition.date"},
		{"no type", func(b map[string]any) { delete(comp(b), "type") }, "Composition.type"},
		{"empty section", func(b map[string]any) {
			comp(b)["section"].([]any)[0].(map[string]any)["entry"] = []any{}
		}, "cmp-1"},
		{"dangling section entry", func(b map[string]any) {
			comp(b)["section"].([]any)[0].(map[string]any)["entry"] = []any{map[string]any{"reference": "urn:uuid:00000000-0000-0000-0000-000000000000"}}
		}, "not an entry fullUrl"},
		{"dangling urn:uuid reference", func(b map[string]any) {
			entry(b, 2)["resource"].(map[string]any)["subject"] = map[string]any{"reference": "urn:uuid:00000000-0000-0000-0000-000000000000"}
		}, "not an entry fullUrl"},
		{"dangling relative reference", func(b map[string]any) {
			entry(b, 2)["resource"].(map[string]any)["subject"] = map[string]any{"reference": "Patient/pt"}
		}, "not an entry fullUrl"},
		{"dangling nested relative reference", func(b map[string]any) {
			entry(b, 2)["resource"].(map[string]any)["author"] = []any{map[string]any{"reference": "Organization/o"}}
		}, "not an entry fullUrl"},
		{"fullUrl differs from id", func(b map[string]any) { entry(b, 1)["resource"].(map[string]any)["id"] = "x" }, "does not carry"},
		{"no profile", func(b map[string]any) { b["meta"].(map[string]any)["profile"] = []any{} }, "DocumentBundle"},
		{"no security", func(b map[string]any) { delete(b["meta"].(map[string]any), "security") }, "confidentiality"},
		{"no self link", func(b map[string]any) { b["link"] = []any{} }, "self"},
		{"no care context", func(b map[string]any) { delete(comp(b), "extension") }, "care context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b map[string]any
			json.Unmarshal(valid, &b)
			tt.mutate(b)
			data, _ := json.Marshal(b)
			if _, err := CheckDocument(data); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

func entry(b map[string]any, i int) map[string]any { return b["entry"].([]any)[i].(map[string]any) }
func comp(b map[string]any) map[string]any         { return entry(b, 0)["resource"].(map[string]any) }

// TestCheckDocumentAllowsOutsideReferences: absolute URLs and references
// to contained resources are not entries, and need not be.
func TestCheckDocumentAllowsOutsideReferences(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	valid, err := fhir.Document(store.Record{
		ID: "r1", CareContextID: "cc1", WorkspaceID: "w", SHA1: bytes.Repeat([]byte{1}, 20), Size: 1,
		ContentType: "audio/wave", Title: "t", Version: 1, CreatedAt: now, UpdatedAt: now,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal(valid, &b); err != nil {
		t.Fatal(err)
	}
	entry(b, 2)["resource"].(map[string]any)["extension"] = []any{
		map[string]any{"url": "https://a.example/x", "valueReference": map[string]any{"reference": "https://registry.example/fhir/Patient/7"}},
		map[string]any{"url": "https://a.example/y", "valueReference": map[string]any{"reference": "#contained"}},
	}
	data, _ := json.Marshal(b)
	if _, err := CheckDocument(data); err != nil {
		t.Fatalf("outside references rejected: %v", err)
	}
}
