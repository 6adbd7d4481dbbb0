package hdcauth

import (
	"net/http"
	"slices"
	"testing"
)

// TestDropHopFields: what a client's Connection field names, and the
// fields of its connection, are removed; the edge's own names and the
// other fields stay.
func TestDropHopFields(t *testing.T) {
	tests := []struct {
		name string
		in   http.Header
		want []string // the names left
	}{
		{"none", http.Header{"Content-Type": {"a"}}, []string{"Content-Type"}},
		{"an upgrade to h2c", http.Header{"Connection": {"Upgrade, HTTP2-Settings"}, "Upgrade": {"h2c"},
			"Http2-Settings": {"AAMAAABkAAQCAAAAAAIAAAAA"}, "Content-Type": {"a"}}, []string{"Content-Type"}},
		{"named fields, any case and spacing", http.Header{"Connection": {"x-custom ,  KEEP-alive", "close"},
			"X-Custom": {"1"}, "Keep-Alive": {"timeout=5"}, "Accept": {"b"}}, []string{"Accept"}},
		{"the edge's own names", http.Header{"Connection": {"X-Hdc-Key-Client-Id, x-hdc-client-ip"},
			"X-Hdc-Key-Client-Id": {"c1"}, "X-Hdc-Client-Ip": {"127.0.0.9"}}, []string{"X-Hdc-Client-Ip", "X-Hdc-Key-Client-Id"}},
		{"fields of one connection, not named", http.Header{"Proxy-Connection": {"keep-alive"}, "Upgrade": {"websocket"}},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dropHopFields(tt.in)
			var got []string
			for name := range tt.in {
				got = append(got, name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("left %v, want %v", got, tt.want)
			}
		})
	}
}
