package main

import (
	"os"
	"testing"
)

// TestSetSiteEnv: the variables the reference Caddyfile derives are set
// from HDC_SITE and HDC_TLS, unless the operator set them.
func TestSetSiteEnv(t *testing.T) {
	tests := []struct {
		name                    string
		env                     map[string]string
		wantOther, wantAutoHTTP string
	}{
		{"a site of no host", map[string]string{siteEnv: "http://:8080"}, "", "disable_redirects"},
		{"a name, Caddy's certificates", map[string]string{siteEnv: "api.example.org"}, "https://", "disable_redirects"},
		{"a name, the operator's certificate", map[string]string{siteEnv: "api.example.org", tlsEnv: "files"}, "https://", "disable_redirects disable_certs"},
		{"an address and port", map[string]string{siteEnv: "https://127.0.0.1:8443", tlsEnv: "internal"}, "https://:8443", "disable_redirects"},
		{"set by the operator", map[string]string{siteEnv: "api.example.org", otherHostsEnv: "", autoHTTPSEnv: "off"}, "", "off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range []string{siteEnv, tlsEnv, otherHostsEnv, autoHTTPSEnv} {
				unsetEnv(t, name)
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if err := setSiteEnv(); err != nil {
				t.Fatal(err)
			}
			if got := os.Getenv(otherHostsEnv); got != tt.wantOther {
				t.Errorf("%s = %q, want %q", otherHostsEnv, got, tt.wantOther)
			}
			if got := os.Getenv(autoHTTPSEnv); got != tt.wantAutoHTTP {
				t.Errorf("%s = %q, want %q", autoHTTPSEnv, got, tt.wantAutoHTTP)
			}
		})
	}
	t.Run("an address Caddy cannot read", func(t *testing.T) {
		t.Setenv(siteEnv, "https://api.example.org:99999")
		unsetEnv(t, otherHostsEnv)
		if err := setSiteEnv(); err == nil {
			t.Fatal("a site address Caddy cannot read was taken")
		}
	})
}

// unsetEnv unsets name for the test; t.Setenv, called first, restores it.
func unsetEnv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "")
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}
