package ratelimit

import (
	"testing"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/health-data-connect/hdc/internal/contract"
)

func TestFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		field func() (string, error)
		want  string
	}{
		{"rate policy", func() (string, error) {
			return PolicyField(RatePolicy("writes", contract.Rate{PerSecond: 100, Burst: 100}))
		}, `"writes";q=100;w=1`},
		{"slow rate policy", func() (string, error) {
			return PolicyField(RatePolicy("login", contract.Rate{PerSecond: 0.2, Burst: 3}))
		}, `"login";q=1;w=5`},
		{"quota policy", func() (string, error) {
			return PolicyField(RatePolicy("uploads", contract.Rate{PerSecond: 5, Burst: 5}), QuotaPolicy("upload-bytes", 10<<20))
		}, `"uploads";q=5;w=1, "upload-bytes";q=10485760;w=86400;qu="content-bytes"`},
		{"status", func() (string, error) {
			return StatusField(Status{Name: "writes", Remaining: 42, Reset: 580 * time.Millisecond})
		}, `"writes";r=42;t=1`},
		{"status spent", func() (string, error) {
			return StatusField(Status{Name: "writes", Remaining: -1, Reset: 0})
		}, `"writes";r=0;t=0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.field()
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestStatusFieldParses: what StatusField writes, httpsfv reads back.
func TestStatusFieldParses(t *testing.T) {
	t.Parallel()
	v, err := StatusField(Status{Name: "reads", Remaining: 7, Reset: 1500 * time.Millisecond}, Status{Name: "upload-bytes", Remaining: 1 << 30, Reset: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	l, err := httpsfv.UnmarshalList([]string{v})
	if err != nil || len(l) != 2 {
		t.Fatalf("%q: %v, %v", v, l, err)
	}
	item := l[1].(httpsfv.Item)
	if r, _ := item.Params.Get("r"); item.Value != "upload-bytes" || r != int64(1<<30) {
		t.Fatalf("%q: %+v", v, item)
	}
	if _, err := StatusField(Status{Name: `a"b`}); err == nil {
		t.Fatal(`a name with '"' was written`)
	}
}
