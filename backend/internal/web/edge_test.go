package web

import (
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
)

func TestSourceAddr(t *testing.T) {
	tests := []struct {
		name, remote string
		clientIP     []string // X-Hdc-Client-Ip values
		fromEdge     bool
		want         string
	}{
		{"direct peer", "192.0.2.1:5000", nil, true, "192.0.2.1"},
		{"the edge's client address", "192.0.2.1:5000", []string{"203.0.113.9"}, true, "203.0.113.9"},
		{"not from the edge", "192.0.2.1:5000", []string{"203.0.113.9"}, false, "192.0.2.1"},
		{"X-Forwarded-For is ignored", "127.0.0.1:5000", nil, true, "127.0.0.1"},
		{"two addresses", "192.0.2.1:5000", []string{"203.0.113.9", "203.0.113.8"}, true, "192.0.2.1"},
		{"garbage", "127.0.0.1:5000", []string{"not-an-ip"}, true, "127.0.0.1"},
		{"IPv6 reduced to /64", "[2001:db8:1:2:3:4:5:6]:5000", nil, true, "2001:db8:1:2::/64"},
		{"the edge's IPv6 client", "127.0.0.1:5000", []string{"2001:db8:1:2:3:4:5:6"}, true, "2001:db8:1:2::/64"},
		{"mapped IPv4", "[::ffff:192.0.2.7]:5000", nil, true, "192.0.2.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			r.Header.Set("X-Forwarded-For", "198.51.100.1")
			for _, v := range tt.clientIP {
				r.Header.Add(contract.HeaderClientIP, v)
			}
			if tt.fromEdge {
				r, _ = CheckEdge(false, r)
			}
			if got := SourceAddr(r); got != tt.want {
				t.Errorf("SourceAddr = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckEdge(t *testing.T) {
	edgeURI, _ := url.Parse(contract.EdgeURI)
	other, _ := url.Parse("tag:example.org,2026:someone")
	leaf := func(uri *url.URL, usage x509.ExtKeyUsage) *tls.ConnectionState {
		return &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{URIs: []*url.URL{uri}, ExtKeyUsage: []x509.ExtKeyUsage{usage}}}}}
	}
	tests := []struct {
		name   string
		hopTLS bool
		tls    *tls.ConnectionState
		ok     bool
	}{
		{"plain loopback listener", false, nil, true},
		{"the edge's certificate", true, leaf(edgeURI, x509.ExtKeyUsageClientAuth), true},
		{"no TLS on a hop listener", true, nil, false},
		{"no verified certificate", true, &tls.ConnectionState{}, false},
		{"another name", true, leaf(other, x509.ExtKeyUsageClientAuth), false},
		{"a server certificate", true, leaf(edgeURI, x509.ExtKeyUsageServerAuth), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.TLS = tt.tls
			r, p := CheckEdge(tt.hopTLS, r)
			if (p == nil) != tt.ok || (p != nil && (p.Status != 403 || p.Code != "untrusted_source")) {
				t.Fatalf("CheckEdge = %v", p)
			}
			if fromEdge, _ := r.Context().Value(edgeKey{}).(bool); fromEdge != tt.ok {
				t.Fatalf("marked from the edge: %v", fromEdge)
			}
		})
	}
}
