package main

import "testing"

// TestNewInstrRow checks a row's figures per request: the totals, those
// outside the collector, and the bytes allocated, each edge over plain.
func TestNewInstrRow(t *testing.T) {
	plain := instrCount{requests: 1000, total: 300_000_000, heap: heapCount{Bytes: 17_000_000, Objects: 200_000},
		funcs: annotation{costs: map[string]int64{"runtime.gcDrain": 100_000_000, "net/http.(*conn).serve": 200_000_000},
			collector: map[string]bool{"runtime.gcDrain": true}}}
	edge := instrCount{requests: 1000, total: 500_000_000, heap: heapCount{Bytes: 25_500_000, Objects: 300_000},
		funcs: annotation{costs: map[string]int64{"runtime.gcDrain": 100_000_000, "net/http.(*conn).serve": 250_000_000,
			"github.com/health-data-connect/hdc/internal/jwe.(*Key).Open": 150_000_000},
			collector: map[string]bool{"runtime.gcDrain": true}}}
	r := newInstrRow("1KiB", "A128CBC-HS256", clearHop, "hdc-edge", plain, edge)
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"plain", r.PlainInstr, 300_000},
		{"edge", r.EdgeInstr, 500_000},
		{"ratio", r.Ratio, 500.0 / 300},
		{"plain outside the collector", r.PlainOutside, 200_000},
		{"edge outside the collector", r.EdgeOutside, 400_000},
		{"ratio outside the collector", r.OutsideRatio, 2},
		{"bytes ratio", r.BytesRatio, 1.5},
		{"edge objects", r.EdgeObjects, 300},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if top := r.TopExtra[0]; top.Name != "github.com/health-data-connect/hdc/internal/jwe.(*Key).Open" || top.Edge != 150_000 {
		t.Errorf("the function that adds most: %+v", top)
	}
}
