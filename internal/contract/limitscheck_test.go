package contract

import (
	"math"
	"testing"
)

func TestLimitsCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		l    Limits
		ok   bool
	}{
		{"none", Limits{}, true},
		{"a rate", Limits{Rates: map[RouteClass]Rate{ClassWrites: {PerSecond: 100, Burst: 20}}}, true},
		{"no limit", Limits{Rates: map[RouteClass]Rate{ClassReads: {}}}, true},
		{"a quota", Limits{UploadBytesPerDay: 10 << 20}, true},
		{"a fraction of a request a second", Limits{Rates: map[RouteClass]Rate{ClassLogin: {PerSecond: 0.5, Burst: 1}}}, true},
		{"an unknown class", Limits{Rates: map[RouteClass]Rate{"deletes": {PerSecond: 1, Burst: 1}}}, false},
		{"a rate without a burst", Limits{Rates: map[RouteClass]Rate{ClassReads: {PerSecond: 10}}}, false},
		{"a burst without a rate", Limits{Rates: map[RouteClass]Rate{ClassReads: {Burst: 10}}}, false},
		{"a negative rate", Limits{Rates: map[RouteClass]Rate{ClassReads: {PerSecond: -1, Burst: 1}}}, false},
		{"NaN", Limits{Rates: map[RouteClass]Rate{ClassReads: {PerSecond: math.NaN(), Burst: 1}}}, false},
		{"a rate past its bound", Limits{Rates: map[RouteClass]Rate{ClassReads: {PerSecond: MaxPerSecond + 1, Burst: 1}}}, false},
		{"a burst past its bound", Limits{Rates: map[RouteClass]Rate{ClassReads: {PerSecond: 1, Burst: MaxBurst + 1}}}, false},
		{"a negative quota", Limits{UploadBytesPerDay: -1}, false},
		{"a quota past its bound", Limits{UploadBytesPerDay: MaxUploadBytesPerDay + 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.l.Check(); (err == nil) != tt.ok {
				t.Fatalf("Check() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
