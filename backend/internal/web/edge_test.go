package web

import (
	"net/http/httptest"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
)

func TestSourceAddr(t *testing.T) {
	tests := []struct {
		name, remote string
		xff          []string
		secret       string // the edge secret configured and sent
		want         string
	}{
		{"direct peer", "192.0.2.1:5000", nil, "", "192.0.2.1"},
		{"forwarded ignored from a stranger", "192.0.2.1:5000", []string{"203.0.113.9"}, "", "192.0.2.1"},
		{"forwarded from loopback", "127.0.0.1:5000", []string{"198.51.100.1, 203.0.113.9"}, "", "203.0.113.9"},
		{"last line wins", "[::1]:5000", []string{"198.51.100.1", "203.0.113.8"}, "", "203.0.113.8"},
		{"forwarded with the edge secret", "192.0.2.1:5000", []string{"203.0.113.9"}, "s", "203.0.113.9"},
		{"garbage forwarded", "127.0.0.1:5000", []string{"not-an-ip"}, "", "127.0.0.1"},
		{"IPv6 reduced to /64", "[2001:db8:1:2:3:4:5:6]:5000", nil, "", "2001:db8:1:2::/64"},
		{"mapped IPv4", "[::ffff:192.0.2.7]:5000", nil, "", "192.0.2.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if tt.secret != "" {
				r.Header.Set(contract.HeaderEdgeSecret, tt.secret)
			}
			r, p := CheckEdgeSecret(tt.secret, r)
			if p != nil {
				t.Fatalf("%s: %v", tt.name, p)
			}
			if got := SourceAddr(r); got != tt.want {
				t.Errorf("%s: SourceAddr = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestCheckEdgeSecret(t *testing.T) {
	tests := []struct {
		name   string
		secret string
		sent   []string
		ok     bool
	}{
		{"no secret, none sent", "", nil, true},
		{"no secret, one sent", "", []string{"anything"}, true},
		{"right secret", "s3cret", []string{"s3cret"}, true},
		{"secret missing", "s3cret", nil, false},
		{"secret too short", "s3cret", []string{"s3cre"}, false},
		{"secret sent twice", "s3cret", []string{"s3cret", "s3cret"}, false},
		{"secret with a suffix", "s3cret", []string{"s3cret-and-more"}, false},
		{"empty secret sent", "s3cret", []string{""}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			for _, v := range tt.sent {
				r.Header.Add(contract.HeaderEdgeSecret, v)
			}
			r, p := CheckEdgeSecret(tt.secret, r)
			if (p == nil) != tt.ok || (p != nil && (p.Status != 403 || p.Code != "untrusted_source")) {
				t.Errorf("secret %q sent %q: %v", tt.secret, tt.sent, p)
			}
			if r.Header.Get(contract.HeaderEdgeSecret) != "" {
				t.Errorf("the edge secret header reaches the handler")
			}
		})
	}
}
