package hdcsite

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestOtherHosts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		site, want string
	}{
		{"", ""},
		{"http://:8080", ""},
		{"http://", ""},
		{"api.example.org", "https://"},
		{"https://api.example.org", "https://"},
		{"api.example.org:443", "https://"},
		{"http://api.example.org", "http://"},
		{"api.example.org:80", "http://"},
		{"https://127.0.0.1:8443", "https://:8443"},
		{"localhost:8443", "https://:8443"},
		{"http://api.example.org:8080", "http://:8080"},
		{"api.example.org www.example.org", "https://"},
		{"api.example.org http://api.example.org:8080", "https:// http://:8080"},
		// A port that serves every host already needs no catch-all.
		{"api.example.org https://", ""},
		{"https://localhost:8443 https://:8443", ""},
	}
	for _, tt := range tests {
		t.Run(tt.site, func(t *testing.T) {
			t.Parallel()
			got, err := OtherHosts(tt.site)
			if err != nil || got != tt.want {
				t.Fatalf("OtherHosts(%q) = %q, %v; want %q", tt.site, got, err, tt.want)
			}
		})
	}
	if _, err := OtherHosts("https://api.example.org:99999"); err == nil {
		t.Fatal("an address Caddy cannot read was taken")
	}
}

func TestSiteRefusesOtherHosts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args        string // hdc_site's arguments
		host        string // the request's Host
		misdirected bool
	}{
		{"https://127.0.0.1:8443", "127.0.0.1:8443", false},
		{"https://127.0.0.1:8443", "127.0.0.1", false},
		{"https://127.0.0.1:8443", "other.example", true},
		{"https://127.0.0.1:8443", "localhost:8443", true},
		{"api.example.org", "API.Example.org", false},
		{"api.example.org", "api.example.org.evil", true},
		{"api.example.org", "", true},
		{"api.example.org www.example.org", "www.example.org", false},
		{"*.example.org", "api.example.org", false},
		{"*.example.org", "a.b.example.org", true},
		{"https://[::1]:8443", "[::1]:8443", false},
		// A site of no host serves every host.
		{"http://:8080", "anything.example", false},
		{"http://", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.args+" "+tt.host, func(t *testing.T) {
			t.Parallel()
			s := new(Site)
			if err := s.UnmarshalCaddyfile(caddyfile.NewTestDispenser("hdc_site " + tt.args)); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
			defer cancel()
			if err := s.Provision(ctx); err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/connect-auth/v1/account/login", nil)
			r.Host = tt.host
			repl := caddy.NewReplacer()
			r = r.WithContext(context.WithValue(r.Context(), caddy.ReplacerCtxKey, repl))
			w := httptest.NewRecorder()
			passed := false
			err := s.ServeHTTP(w, r, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
				passed = true
				return nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			if passed == tt.misdirected {
				t.Fatalf("Host %q: passed on %v", tt.host, passed)
			}
			if tt.misdirected && (w.Code != http.StatusMisdirectedRequest || w.Header().Get("Content-Type") != "application/problem+json") {
				t.Fatalf("Host %q: %d %s, want a 421 problem", tt.host, w.Code, w.Header().Get("Content-Type"))
			}
		})
	}
}
