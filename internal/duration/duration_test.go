package duration

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"1800", 30 * time.Minute, ""},
		{"0", 0, ""},
		{"-5", -5 * time.Second, ""},
		{"30m", 30 * time.Minute, ""},
		{"52560h", 52560 * time.Hour, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"9223372036854775807", 0, "too long"},
		{"", 0, "neither seconds nor a duration"},
		{"soon", 0, "neither seconds nor a duration"},
		{"1.5", 0, "neither seconds nor a duration"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Parse(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.wantErr)
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Fatalf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}
