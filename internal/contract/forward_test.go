package contract

import "testing"

func TestForwards(t *testing.T) {
	tests := []struct {
		path, name string
		want       bool
	}{
		{PathUpload, "Content-Type", true},
		{PathRefresh, "Client-Id", true},
		{PathUpload, HeaderClientID, true},
		{PathUpload, HeaderKeyID, true},
		{PathRefresh, "Authorization", true},
		{PathRetrieve, "Authorization", false},
		{PathRefreshCompat, "Authorization", false},
		{PathRetrieve, "X-Api-Key", false},
		{PathRetrieve, "Cookie", false},
		{PathRetrieve, "Accept", false},
		{PathRetrieve, "User-Agent", false},
		{PathRetrieve, "X-Forwarded-For", false},
		{PathRetrieve, "content-type", false}, // names arrive canonical
		{PathUpload, "Traceparent", true},
		{PathUpload, "Tracestate", true},
		{PathUpload, "Baggage", false}, // the trace context only: baggage is the client's to keep
		{PathSubscriptions + "/s1/recover", "Idempotency-Key", true},
		{PathSubscriptions + "/s1/signing-key", "Idempotency-Key", true},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.name, func(t *testing.T) {
			if got := Forwards(tt.path, tt.name); got != tt.want {
				t.Fatalf("Forwards = %v, want %v", got, tt.want)
			}
		})
	}
}
