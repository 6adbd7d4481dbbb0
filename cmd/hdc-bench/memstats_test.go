package main

import (
	"strings"
	"testing"
)

func TestParseHeapCount(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     heapCount
		err      bool
	}{
		{"expvar", `{"cmdline":["caddy"],"memstats":{"Alloc":1,"TotalAlloc":123456,"Sys":9,"Mallocs":789,"Frees":3}}`,
			heapCount{Bytes: 123456, Objects: 789}, false},
		{"no memstats", `{"cmdline":["caddy"]}`, heapCount{}, true},
		{"not JSON", `<html>`, heapCount{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseHeapCount(strings.NewReader(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want an error: %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
