package records

import (
	"slices"
	"testing"
)

func TestParseTasks(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  []string
		code  string
	}{
		{"empty query", "", nil, ""},
		{"no task", "other=1", nil, ""},
		{"one task", "task=pii", []string{"pii"}, ""},
		{"deduplicated and ordered", "task=classification&task=smart&task=pii&task=smart", []string{"smart", "pii", "classification"}, ""},
		{"task case matters", "task=PII", nil, "invalid_task"},
		{"unknown task", "task=srp", nil, "invalid_task"},
		{"empty task", "task=", nil, "invalid_task"},
		{"one unknown among known", "task=pii&task=bogus", nil, "invalid_task"},
		{"malformed query", "task=%zz", nil, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, p := parseTasks(tt.query)
			switch {
			case tt.code == "" && (p != nil || !slices.Equal(got, tt.want)):
				t.Errorf("parseTasks(%q) = %q, %v; want %q", tt.query, got, p, tt.want)
			case tt.code != "" && (p == nil || p.Code != tt.code || p.Status != 400):
				t.Errorf("parseTasks(%q) problem = %v, want %s", tt.query, p, tt.code)
			}
		})
	}
}

func TestMaxJSONUploadBody(t *testing.T) {
	// The base64 of a 3000-byte file is 4000 characters; each may be a
	// six-byte escape.
	if got := MaxJSONUploadBody(3000); got != 4000*6+64<<10 {
		t.Fatalf("MaxJSONUploadBody(3000) = %d", got)
	}
}
