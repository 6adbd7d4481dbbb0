package contract

import (
	"strings"
	"testing"
)

func TestSyntax(t *testing.T) {
	tests := []struct {
		check string
		fn    func(string) bool
		in    string
		want  bool
	}{
		{"ValidID", ValidID, "acme", true},
		{"ValidID", ValidID, "a.b_c-1", true},
		{"ValidID", ValidID, "0", true},
		{"ValidID", ValidID, strings.Repeat("a", 64), true},
		{"ValidID", ValidID, "", false},
		{"ValidID", ValidID, "-a", false},
		{"ValidID", ValidID, "a b", false},
		{"ValidID", ValidID, "a/b", false},
		{"ValidID", ValidID, strings.Repeat("a", 65), false},
		{"ValidID", ValidID, "é", false},
		{"IsUUID", IsUUID, "6f9619ff-8b86-d011-b42d-00cf4fc964ff", true},
		{"IsUUID", IsUUID, "6F9619FF-8B86-D011-B42D-00CF4FC964FF", false}, // not canonical
		{"IsUUID", IsUUID, "{6f9619ff-8b86-d011-b42d-00cf4fc964ff}", false},
		{"IsUUID", IsUUID, "6f9619ff8b86d011b42d00cf4fc964ff", false},
		{"IsUUID", IsUUID, "hdc_cs_6f9619ff8b86d011b42d00cf4fc964ff", false},
		{"IsUUID", IsUUID, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.check+"/"+tt.in, func(t *testing.T) {
			if got := tt.fn(tt.in); got != tt.want {
				t.Errorf("%s(%q) = %v", tt.check, tt.in, got)
			}
		})
	}
}
