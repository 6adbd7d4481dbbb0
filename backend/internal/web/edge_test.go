package web

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
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
			r.Header.Set(contract.HeaderRequestID, hopHeaders[3])
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
	edgeURI, _ := url.Parse(contract.RoleEdge.URI())
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
			setHop(r.Header, hopHeaders)
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

// hopHeaders are the hop headers of a plain request from the edge.
var hopHeaders = []string{contract.HeaderClientIP, "203.0.113.9", contract.HeaderRequestID, "0f9f6c8e-4a3b-4c1d-9e2f-5a6b7c8d9e0f"}

// setHop adds headers (names and values alternating) to h.
func setHop(h http.Header, headers []string) {
	for i := 0; i+1 < len(headers); i += 2 {
		h.Add(headers[i], headers[i+1])
	}
}

// TestCheckEdgeHopHeaders: a request must carry the client's address and
// the request's id once each, and an encrypted one its kid and key owner
// once each; anything else is refused, whoever sent it.
func TestCheckEdgeHopHeaders(t *testing.T) {
	const (
		kid   = "k_abcdefghijklmnop"
		owner = "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
	)
	key := []string{contract.HeaderKeyID, kid, contract.HeaderKeyClientID, owner}
	encrypted := append(append([]string{}, hopHeaders...), key...)
	fresh := []string{contract.HeaderJTI, "a-request-id-0001", contract.HeaderJTIExpires, "1795000300"}
	with := func(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }
	tests := []struct {
		name    string
		headers []string
		ok      bool
	}{
		{"plain", hopHeaders, true},
		{"encrypted", append(append([]string{}, hopHeaders...), key...), true},
		{"an IPv6 client", []string{contract.HeaderClientIP, "2001:db8::1", contract.HeaderRequestID, hopHeaders[3]}, true},
		{"no client address", hopHeaders[2:], false},
		{"two client addresses", append([]string{contract.HeaderClientIP, "192.0.2.1"}, hopHeaders...), false},
		{"a client address that is none", []string{contract.HeaderClientIP, "edge", contract.HeaderRequestID, hopHeaders[3]}, false},
		{"no request id", hopHeaders[:2], false},
		{"two request ids", append([]string{contract.HeaderRequestID, hopHeaders[3]}, hopHeaders...), false},
		{"a request id that is no UUID", []string{contract.HeaderClientIP, "192.0.2.1", contract.HeaderRequestID, "x"}, false},
		{"a kid without its owner", append(append([]string{}, hopHeaders...), key[:2]...), false},
		{"an owner without its kid", append(append([]string{}, hopHeaders...), key[2:]...), false},
		{"two kids", append(append(append([]string{}, hopHeaders...), key...), key[:2]...), false},
		{"a kid of another syntax", append(append([]string{}, hopHeaders...), contract.HeaderKeyID, "no kid", contract.HeaderKeyClientID, owner), false},
		{"fresh", with(encrypted, fresh...), true},
		{"a jti without its expiry", with(encrypted, fresh[:2]...), false},
		{"an expiry without its jti", with(encrypted, fresh[2:]...), false},
		{"a jti on a plain request", with(hopHeaders, fresh...), false},
		{"two jtis", with(encrypted, append(fresh, fresh[:2]...)...), false},
		{"a short jti", with(encrypted, contract.HeaderJTI, "short", contract.HeaderJTIExpires, "1795000300"), false},
		{"an expiry that is no number", with(encrypted, contract.HeaderJTI, "a-request-id-0001", contract.HeaderJTIExpires, "soon"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			setHop(r.Header, tt.headers)
			_, p := CheckEdge(false, r)
			if (p == nil) != tt.ok || (p != nil && (p.Status != 403 || p.Code != "untrusted_source")) {
				t.Fatalf("CheckEdge = %v, want ok %v", p, tt.ok)
			}
		})
	}
}
