package hdcauth

import (
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
)

// pathURL is the URL net/http makes of a request line's path.
func pathURL(escaped string) *url.URL {
	if p, err := url.PathUnescape(escaped); err == nil {
		return &url.URL{Path: p, RawPath: escaped}
	}
	return &url.URL{Path: escaped}
}

func TestCanonicalPath(t *testing.T) {
	t.Parallel()
	sub := contract.PathSubscriptions + "/"
	tests := []struct {
		path string
		ok   bool
	}{
		{"/connect-auth/v1/account/login", true},
		{"/connect-auth/v1/account/refresh", true},
		{"/connect-auth/v1/account/refresh-token", true},
		{"/health/api/v1/fhir/retrieve", true},
		{"/health/api/v1/fhir/AuditEvent", true},
		{"/mr/api/v2/docs", true},
		{"/.well-known/jwks.json", true},
		{contract.PathSubscriptions, true},
		{sub + "4b1c9f8e-1d2a-4c57-9a0e-3f1b2c3d4e5f", true},
		{sub + "not-a-uuid", true}, // the backend answers 404, as it reads it
		{sub + "a.b_c~d", true},
		{sub + "s1/deliveries", true},
		{sub + "s1/deliveries/d-1", true},
		{sub + "s1/deliveries/d-1/redeliver", true},
		{sub + "s1/recover", true},
		{sub + "s1/test", true},
		{sub + "s1/signing-key", true},
		// Not a route as written: the backend would read another path.
		{"/", false},
		{"/mr/api/v2/docs%20x", false},
		{"/a/%41", false},
		{sub, false},
		{sub + ".", false},
		{sub + "..", false},
		{sub + "a/b", false},
		{"//connect-auth/v1/account/login", false},
		{"/connect-auth/v1/account/./login", false},
		{"/connect-auth/v1/x/../account/login", false},
		{"/connect-auth/v1/account/%2e%2e/account/login", false},
		{"/connect-auth%2fv1/account/login", false},
		{`/connect-auth\v1/account/login`, false},
		{"/.well-known/jwks.json/.", false},
		// Case and Unicode, which Caddy's matchers fold (the fourth review).
		{"/CONNECT-AUTH/v1/account/refresh", false},
		{"/mr/api/v2/DOCS", false},
		{"/health/api/v1/fhir/auditevent", false},
		{"/connect-auth/v1/account/log%C4%B0n", false},
		{"/connect-auth/v1/account/logİn", false},
		{"/mr/api/v2/docs;x", false},
		{sub + "..;", false},
		{sub + "x%00", false},
		{sub + "%252e%252e", false},
		{sub + "%c0%ae%c0%ae", false},
		{sub + "\uff0e\uff0e", false},
		{sub + "x;y", false},
		{sub + "s1/deliveries/..", false},
		{sub + "../deliveries", false},
		{sub + "s1/deliveries/d%2f1", false},
		{sub + "s1/deliveries/d;1/redeliver", false},
		{sub + "s1/Deliveries", false},
		{sub + "s1/deliveries/", false},
		{"/mr/api/v2/docs%", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			if got := canonicalPath(pathURL(tt.path)); got != tt.ok {
				t.Fatalf("canonicalPath(%q) = %v, want %v", tt.path, got, tt.ok)
			}
		})
	}
}

// FuzzCanonicalPath holds canonicalPath to what it promises: a path it
// passes is one every reader reads alike, a route of the API as written,
// with nothing to decode, clean, or fold.
func FuzzCanonicalPath(f *testing.F) {
	for _, p := range []string{"/connect-auth/v1/account/login", contract.PathSubscriptions + "/x", "/MR/api/v2/docs", "/a/%2e", "//x"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, escaped string) {
		u := pathURL(escaped)
		if !canonicalPath(u) {
			return
		}
		p := u.EscapedPath()
		switch {
		case strings.ContainsAny(p, "%;\\"):
			t.Fatalf("passed %q, which holds an escape or a separator", p)
		case path.Clean(p) != p:
			t.Fatalf("passed %q, which cleans to %q", p, path.Clean(p))
		case contract.Route(p) == "other":
			t.Fatalf("passed %q, which is no route", p)
		case u.Path != p:
			t.Fatalf("passed %q, which decodes to %q", p, u.Path)
		}
	})
}
