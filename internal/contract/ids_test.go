package contract

import (
	"strings"
	"testing"
)

func TestValidID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"acme", true}, {"a.b_c-1", true}, {"0", true}, {strings.Repeat("a", 64), true},
		{"", false}, {"-a", false}, {"a b", false}, {"a/b", false}, {strings.Repeat("a", 65), false}, {"é", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if got := ValidID(tt.id); got != tt.want {
				t.Errorf("ValidID(%q) = %v", tt.id, got)
			}
		})
	}
}

func TestValidKid(t *testing.T) {
	tests := []struct {
		kid  string
		want bool
	}{
		{"k_2x7", true}, {"client-1:2026.11", true}, {strings.Repeat("k", 128), true},
		{"", false}, {strings.Repeat("k", 129), false}, {"k 1", false}, {"k/1", false}, {"k\n1", false}, {`k"1`, false},
	}
	for _, tt := range tests {
		t.Run(tt.kid, func(t *testing.T) {
			if got := ValidKid(tt.kid); got != tt.want {
				t.Errorf("ValidKid(%q) = %v", tt.kid, got)
			}
		})
	}
}

func TestIsUUID(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"6f9619ff-8b86-d011-b42d-00cf4fc964ff", true},
		{"6F9619FF-8B86-D011-B42D-00CF4FC964FF", false}, // not canonical
		{"{6f9619ff-8b86-d011-b42d-00cf4fc964ff}", false},
		{"6f9619ff8b86d011b42d00cf4fc964ff", false},
		{"hdc_cs_6f9619ff8b86d011b42d00cf4fc964ff", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			if got := IsUUID(tt.s); got != tt.want {
				t.Errorf("IsUUID(%q) = %v", tt.s, got)
			}
		})
	}
}

func TestSameSecret(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"s3cret", "s3cret", true}, {"s3cret", "s3cre", false}, {"s3cret", "", false}, {"", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.a+"/"+tt.b, func(t *testing.T) {
			if got := SameSecret(tt.a, tt.b); got != tt.want {
				t.Errorf("SameSecret(%q, %q) = %v", tt.a, tt.b, got)
			}
		})
	}
}
