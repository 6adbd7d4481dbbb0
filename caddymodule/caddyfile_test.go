package caddymodule

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

func adapt(t *testing.T, src string) (map[string]any, error) {
	t.Helper()
	out, _, err := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}.Adapt([]byte(src), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg, nil
}

// dig walks a decoded JSON value by object keys and array indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// routeHandlers returns, for each path matcher of the site, the handlers of
// its route in order, with their hdc settings: the handlers of a named
// route it invokes, and of a subroute, in their place.
func routeHandlers(cfg map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	server := dig(cfg, "apps", "http", "servers", "srv0")
	named, _ := dig(server, "named_routes").(map[string]any)
	routes, _ := dig(server, "routes").([]any)
	for _, r := range routes {
		paths, _ := dig(r, "match", 0, "path").([]any)
		inner, _ := dig(r, "handle", 0, "routes").([]any)
		hs := flatHandlers(inner, named)
		for _, p := range paths {
			out[p.(string)] = hs
		}
	}
	return out
}

func TestReferenceCaddyfile(t *testing.T) {
	// Every edge names every backend, space-separated.
	t.Setenv("HDC_BACKEND", "10.0.0.5:9080 10.0.0.6:9080")
	t.Setenv("HDC_BACKEND_INTERNAL", "https://10.0.0.5:9081 https://10.0.0.6:9081")
	t.Setenv("HDC_KEEPER", "base64key://a-key-that-must-not-be-in-the-configuration")
	t.Setenv("HDC_RATELIMIT_REDIS_PASSWORD", "a-redis-password-that-must-not-be-in-the-configuration")
	src, err := os.ReadFile("../Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := adapt(t, string(src))
	if err != nil {
		t.Fatal(err)
	}
	// The keys: a file when HDC_KEY_REGISTRY names one when the edge
	// starts, else the backend's key plane over the hop.
	for name, want := range map[string]string{"registry": "{env.HDC_KEY_REGISTRY}",
		"tls_client_cert": "./data/tls/edge.pem", "tls_ca": "./data/tls/ca.pem", "tls_server_name": "hdc-backend"} {
		if got := dig(cfg, "apps", "hdc", "keys", name); got != want {
			t.Fatalf("keys.%s = %v, want %v", name, got, want)
		}
	}
	internal := []any{"https://10.0.0.5:9081", "https://10.0.0.6:9081"}
	for _, at := range [][]any{{"keys", "backends"}, {"tokens", "jwks_backends"}} {
		if got, _ := dig(cfg, append([]any{"apps", "hdc"}, at...)...).([]any); !slices.Equal(got, internal) {
			t.Fatalf("%v = %v, want every backend's internal listener", at, got)
		}
	}
	// The keeper's URL, which may hold a key, stays a placeholder in the
	// configuration Caddy keeps and its admin API serves.
	if got := dig(cfg, "apps", "hdc", "keys", "keeper"); got != "{env.HDC_KEEPER}" {
		t.Fatalf("keeper = %v, want the placeholder {env.HDC_KEEPER}", got)
	}
	// So do the rate limits' Redis and its password, whose values the
	// configuration never holds.
	for name, want := range map[string]any{"redis": "{env.HDC_RATELIMIT_REDIS}", "redis_password": "{env.HDC_RATELIMIT_REDIS_PASSWORD}",
		"redis_password_file": "{env.HDC_RATELIMIT_REDIS_PASSWORD_FILE}", "redis_ca": "{env.HDC_RATELIMIT_REDIS_CA}", "redis_allow_unauthenticated": nil} {
		if got := dig(cfg, "apps", "hdc", "rate_limits", name); got != want {
			t.Fatalf("rate_limits.%s = %v, want %v", name, got, want)
		}
	}
	if b, _ := json.Marshal(cfg); strings.Contains(string(b), "a-redis-password") || strings.Contains(string(b), "a-key-that-must") {
		t.Fatal("the configuration holds a secret of the environment")
	}
	if got := dig(cfg, "apps", "http", "servers", "srv0", "listen", 0); got != "127.0.0.1:8080" {
		t.Fatalf("listen = %v (the default must be loopback)", got)
	}
	routes := routeHandlers(cfg)
	want := map[string]struct {
		order    string
		authMode string
		jweMode  string
		class    string // hdc_ratelimit's: a class, or by_method
	}{
		"/connect-auth/v1/account/login":                   {"vars request_body hdc_auth hdc_ratelimit hdc_jwe hdc_forward reverse_proxy", "public", "login", "login"},
		"/connect-auth/v1/account/refresh-token":           {"vars request_body hdc_auth hdc_ratelimit hdc_jwe hdc_forward reverse_proxy", "refresh", "", "login"},
		"/connect-auth/v1/account/refresh":                 {"vars request_body hdc_auth hdc_ratelimit hdc_jwe hdc_forward reverse_proxy", "public", "any_client", "login"},
		"/.well-known/jwks.json":                           {"hdc_auth hdc_forward reverse_proxy", "public", "", ""},
		"/health/api/v1/fhir/retrieve":                     {"hdc_auth hdc_ratelimit hdc_jwe hdc_forward reverse_proxy", "", "", "reads"},
		"/health/api/v1/fhir/AuditEvent":                   {"hdc_auth hdc_ratelimit hdc_jwe hdc_forward reverse_proxy", "", "", "reads"},
		"/notification/v1/connect/webhook/subscriptions":   {"vars request_body hdc_auth hdc_ratelimit hdc_jwe hdc_forward reverse_proxy", "", "", "by_method"},
		"/notification/v1/connect/webhook/subscriptions/*": {"vars request_body hdc_auth hdc_ratelimit hdc_jwe hdc_forward reverse_proxy", "", "", "by_method"},
		"/mr/api/v2/docs":                                  {"vars request_body hdc_auth hdc_ratelimit hdc_jwe hdc_forward reverse_proxy", "", "", "uploads"},
	}
	for path, w := range want {
		hs := routes[path]
		var names []string
		for _, h := range hs {
			names = append(names, h["handler"].(string))
			switch h["handler"] {
			case "hdc_auth":
				if mode, _ := h["mode"].(string); mode != w.authMode {
					t.Fatalf("%s: hdc_auth mode %q, want %q", path, mode, w.authMode)
				}
			case "hdc_jwe":
				for _, mode := range []string{"login", "any_client"} {
					if on, _ := h[mode].(bool); on != (mode == w.jweMode) {
						t.Fatalf("%s: hdc_jwe %s = %v", path, mode, on)
					}
				}
			case "hdc_ratelimit":
				class, _ := h["class"].(string)
				if by, _ := h["by_method"].(bool); by {
					class = "by_method"
				}
				if class != w.class {
					t.Fatalf("%s: hdc_ratelimit class %q, want %q", path, class, w.class)
				}
			case "reverse_proxy":
				checkBalancing(t, path, h)
			}
		}
		if got := strings.Join(names, " "); got != w.order {
			t.Fatalf("%s: handlers %q, want %q", path, got, w.order)
		}
	}
	if got := dig(routes["/mr/api/v2/docs"][4], "max_body"); got != float64(64<<20) {
		t.Fatalf("upload max_body = %v", got)
	}
	if got := dig(routes["/mr/api/v2/docs"][0], "body_limit"); got != "64MiB" {
		t.Fatalf("upload body_limit = %v, which the 413 answer states", got)
	}
	// A client's sampled flag decides nothing unless the operator trusts
	// it (HDC_TRACE_TRUST_PARENT).
	if h := findHandler(cfg, "hdc_tracing"); dig(h, "trust_parent") != "none" {
		t.Fatalf("hdc_tracing %v, want trust_parent none", h)
	}
	if dig(cfg, "apps", "http", "metrics") == nil {
		t.Fatal("the HTTP metrics are off")
	}
	access := dig(cfg, "logging", "logs", "log0", "encoder").(map[string]any)
	if dig(access, "wrap", "format") != "json" || dig(access, "fields", "request>headers", "filter") != "delete" ||
		dig(access, "fields", "request>uri", "filter") != "regexp" {
		t.Fatalf("the access log keeps headers or query values: %v", access)
	}
}

// findHandler returns the first handler named name anywhere in v, a
// decoded configuration, or nil.
func findHandler(v any, name string) map[string]any {
	switch v := v.(type) {
	case map[string]any:
		if v["handler"] == name {
			return v
		}
		for _, e := range v {
			if h := findHandler(e, name); h != nil {
				return h
			}
		}
	case []any:
		for _, e := range v {
			if h := findHandler(e, name); h != nil {
				return h
			}
		}
	}
	return nil
}

// flatHandlers returns the handlers of routes in order, those of a
// subroute and of an invoked named route in their place.
func flatHandlers(routes []any, named map[string]any) []map[string]any {
	var hs []map[string]any
	for _, r := range routes {
		list, _ := dig(r, "handle").([]any)
		for _, h := range list {
			h := h.(map[string]any)
			switch h["handler"] {
			case "subroute":
				sub, _ := h["routes"].([]any)
				hs = append(hs, flatHandlers(sub, named)...)
			case "invoke":
				hs = append(hs, flatHandlers([]any{named[h["name"].(string)]}, named)...)
			default:
				hs = append(hs, h)
			}
		}
	}
	return hs
}

// checkBalancing checks that the reverse_proxy h of route path balances
// over every backend with Caddy's own health checks and safe retries.
func checkBalancing(t *testing.T, path string, h map[string]any) {
	t.Helper()
	dials := []any{"10.0.0.5:9080", "10.0.0.6:9080"}
	if path == "/.well-known/jwks.json" {
		dials = []any{"10.0.0.5:9081", "10.0.0.6:9081"}
	}
	for i, want := range dials {
		if got := dig(h, "upstreams", i, "dial"); got != want {
			t.Fatalf("%s: upstream %d is %v, want %v", path, i, got, want)
		}
	}
	for _, c := range []struct {
		at   []any
		want any
	}{
		{[]any{"load_balancing", "selection_policy", "policy"}, "least_conn"},
		{[]any{"load_balancing", "retries"}, float64(2)},
		// Only a request that never reached a backend is sent to another.
		{[]any{"load_balancing", "retry_match", 0, "expression"}, "false"},
		// A backend that fails requests is left out like one that
		// refuses connections; a 503 (load shed) does not count.
		{[]any{"health_checks", "passive", "max_fails"}, float64(3)},
		{[]any{"health_checks", "passive", "fail_duration"}, float64(10 * time.Second)},
		{[]any{"health_checks", "passive", "unhealthy_status"}, "[500 502 504]"},
		{[]any{"transport", "response_header_timeout"}, float64(time.Minute)},
	} {
		got := dig(h, c.at...)
		if list, ok := got.([]any); ok {
			got = fmt.Sprint(list)
		}
		if got != c.want {
			t.Fatalf("%s: reverse_proxy %v = %v, want %v", path, c.at, got, c.want)
		}
	}
	// One active checker per backend: the API's routes share one
	// reverse_proxy, the JWKS's has none of its own.
	active := dig(h, "health_checks", "active")
	switch {
	case path == "/.well-known/jwks.json" && active != nil:
		t.Fatalf("%s: an active health checker of its own: %v", path, active)
	case path != "/.well-known/jwks.json" && (dig(active, "uri") != "/readyz" || dig(active, "interval") != float64(time.Second)):
		t.Fatalf("%s: active health checks %v, want /readyz every second", path, active)
	}
}

func TestCaddyfileDirectives(t *testing.T) {
	site := func(body string) string { return ":8080 {\n" + body + "\n}" }
	global := func(body string) string { return "{\n hdc {\n" + body + "\n }\n}\n:8080 {\n respond ok\n}" }
	tests := []struct {
		name    string
		src     string
		wantErr string
		check   func(t *testing.T, cfg map[string]any)
	}{
		{"jwe options", site("route {\n hdc_jwe login {\n require\n max_body 2MiB\n spool_threshold 512KiB\n spool_dir /var/tmp\n max_response 1MB\n }\n}"), "",
			func(t *testing.T, cfg map[string]any) {
				h := dig(cfg, "apps", "http", "servers", "srv0", "routes", 0, "handle", 0, "routes", 0, "handle", 0)
				want := map[string]any{"handler": "hdc_jwe", "login": true, "require": true, "max_body": float64(2 << 20),
					"spool_threshold": float64(512 << 10), "spool_dir": "/var/tmp", "max_response": float64(1000000)}
				for k, v := range want {
					if dig(h, k) != v {
						t.Fatalf("%s = %v, want %v", k, dig(h, k), v)
					}
				}
			}},
		{"jwe unknown mode", site("hdc_jwe logout"), "unknown hdc_jwe mode", nil},
		{"jwe any_client", site("route {\n hdc_jwe any_client\n}"), "",
			func(t *testing.T, cfg map[string]any) {
				h := dig(cfg, "apps", "http", "servers", "srv0", "routes", 0, "handle", 0, "routes", 0, "handle", 0)
				if dig(h, "any_client") != true || dig(h, "login") != nil {
					t.Fatalf("handler %v", h)
				}
			}},
		{"jwe unknown subdirective", site("hdc_jwe {\n max_bodies 1MB\n}"), "unknown hdc_jwe subdirective", nil},
		{"jwe bad size", site("hdc_jwe {\n max_body lots\n}"), "invalid size", nil},
		{"jwe missing argument", site("hdc_jwe {\n spool_dir\n}"), "wrong argument count", nil},
		{"auth unknown mode", site("hdc_auth admin"), "unknown hdc_auth mode", nil},
		{"auth with a block", site("hdc_auth {\n issuer x\n}"), "takes no block", nil},
		{"global", global("keys {\n registry /k.json\n poll_interval 500ms\n }\n tokens {\n jwks_file /j.json\n issuer i\n audience a\n leeway 10s\n refresh_cooldown 1m\n cache_size 5\n cache_max_age 20s\n refresh_window 24h\n }"), "",
			func(t *testing.T, cfg map[string]any) {
				app := dig(cfg, "apps", "hdc")
				for path, want := range map[string]any{"keys.registry": "/k.json", "keys.poll_interval": float64(5e8),
					"tokens.jwks_file": "/j.json", "tokens.issuer": "i", "tokens.audience": "a", "tokens.leeway": float64(1e10),
					"tokens.refresh_cooldown": float64(6e10), "tokens.cache_size": float64(5), "tokens.cache_max_age": float64(2e10),
					"tokens.refresh_window": float64(864e11)} {
					parts := strings.Split(path, ".")
					if got := dig(app, parts[0], parts[1]); got != want {
						t.Fatalf("%s = %v, want %v", path, got, want)
					}
				}
			}},
		{"rate limits' Redis", global("rate_limits {\n redis rediss://hdc-edge@10.0.0.31:6380/0\n redis_password {env.REDIS_PW}\n redis_password_file /etc/hdc/redis-password\n redis_ca /etc/hdc/redis-ca.pem\n redis_allow_unauthenticated true\n }"), "",
			func(t *testing.T, cfg map[string]any) {
				for name, want := range map[string]any{"redis": "rediss://hdc-edge@10.0.0.31:6380/0", "redis_password": "{env.REDIS_PW}",
					"redis_password_file": "/etc/hdc/redis-password", "redis_ca": "/etc/hdc/redis-ca.pem", "redis_allow_unauthenticated": true} {
					if got := dig(cfg, "apps", "hdc", "rate_limits", name); got != want {
						t.Fatalf("rate_limits.%s = %v, want %v", name, got, want)
					}
				}
			}},
		{"rate limits' Redis allowed maybe", global("rate_limits {\n redis_allow_unauthenticated maybe\n }"), `"maybe" is not true or false`, nil},
		{"tracing trusts proxies", site("hdc_tracing {\n trust_parent trusted_proxies\n}"), "",
			func(t *testing.T, cfg map[string]any) {
				if h := findHandler(cfg, "hdc_tracing"); dig(h, "trust_parent") != "trusted_proxies" {
					t.Fatalf("handler %v", h)
				}
			}},
		{"tracing alone", site("hdc_tracing"), "",
			func(t *testing.T, cfg map[string]any) {
				if h := findHandler(cfg, "hdc_tracing"); h == nil || dig(h, "trust_parent") != nil {
					t.Fatalf("handler %v", h)
				}
			}},
		{"tracing unknown trust", site("hdc_tracing {\n trust_parent clients\n}"), `trust_parent "clients": none, trusted_proxies or all`, nil},
		{"tracing unknown subdirective", site("hdc_tracing {\n sampler always_on\n}"), "unknown hdc_tracing subdirective", nil},
		{"tracing argument", site("hdc_tracing on"), "takes no arguments", nil},
		{"global unknown block", global("key {\n }"), "unknown hdc subdirective", nil},
		{"global keys from the backends", global("keys {\n backend https://b:9081 https://c:9081\n tls_client_auth /e.pem /e-key.pem\n tls_ca /ca.pem\n tls_server_name hdc-backend\n cache_size 5000\n lookup_rate 50 80\n unknown_ttl 1m\n }"), "",
			func(t *testing.T, cfg map[string]any) {
				keys := dig(cfg, "apps", "hdc", "keys")
				if got, _ := dig(keys, "backends").([]any); !slices.Equal(got, []any{"https://b:9081", "https://c:9081"}) {
					t.Fatalf("keys.backends = %v", got)
				}
				for name, want := range map[string]any{"tls_client_cert": "/e.pem", "tls_client_key": "/e-key.pem",
					"tls_ca": "/ca.pem", "tls_server_name": "hdc-backend", "cache_size": float64(5000), "lookup_rate": float64(50),
					"lookup_burst": float64(80), "unknown_ttl": float64(6e10), "registry": nil} {
					if got := dig(keys, name); got != want {
						t.Fatalf("keys.%s = %v, want %v", name, got, want)
					}
				}
			}},
		{"global keys file", global("keys {\n file /k.json\n }"), "",
			func(t *testing.T, cfg map[string]any) {
				if got := dig(cfg, "apps", "hdc", "keys", "registry"); got != "/k.json" {
					t.Fatalf("keys.registry = %v", got)
				}
			}},
		{"global bad lookup rate", global("keys {\n lookup_rate fast\n }"), "not a positive number", nil},
		{"global bad lookup burst", global("keys {\n lookup_rate 5 0\n }"), "not a positive integer", nil},
		{"global unknown keys option", global("keys {\n path /x\n }"), "unknown keys subdirective", nil},
		{"global unknown tokens option", global("tokens {\n jwks /x\n }"), "unknown tokens subdirective", nil},
		{"global bad duration", global("keys {\n poll_interval soon\n }"), "invalid duration", nil},
		{"global bad cache size", global("tokens {\n cache_size many\n }"), "invalid number", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := adapt(t, tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, cfg)
		})
	}
}

// TestReferenceCaddyfileTLS: where an HTTPS site's certificate comes from
// (HDC_TLS): Caddy's by default, the operator's files with Caddy managing
// none besides (auto_https disable_certs, which hdc-edge sets for files:
// the site shares its names with the catch-all of its port), or Caddy's
// local authority for a name too.
func TestReferenceCaddyfileTLS(t *testing.T) {
	src, err := os.ReadFile("../Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want func(tlsApp, server map[string]any) bool
	}{
		{"auto", map[string]string{}, func(tlsApp, server map[string]any) bool {
			return dig(tlsApp, "certificates", "load_files") == nil && fmt.Sprint(dig(tlsApp, "certificates", "automate")) == "[api.example.org]"
		}},
		{"files", map[string]string{"HDC_TLS": "files", "HDC_TLS_CERT": "/etc/hdc/site.pem", "HDC_TLS_KEY": "/etc/hdc/site-key.pem",
			"HDC_AUTO_HTTPS": "disable_redirects disable_certs"}, func(tlsApp, server map[string]any) bool {
			return dig(tlsApp, "certificates", "load_files", 0, "certificate") == "/etc/hdc/site.pem" &&
				dig(tlsApp, "certificates", "automate") == nil && dig(server, "automatic_https", "disable_certificates") == true
		}},
		{"internal", map[string]string{"HDC_TLS": "internal"}, func(tlsApp, server map[string]any) bool {
			return fmt.Sprint(dig(tlsApp, "automation", "policies", 0, "issuers", 0, "module")) == "internal"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HDC_SITE", "api.example.org")
			t.Setenv("HDC_SITE_OTHER_HOSTS", "https://")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			cfg, err := adapt(t, string(src))
			if err != nil {
				t.Fatal(err)
			}
			tlsApp, _ := dig(cfg, "apps", "tls").(map[string]any)
			server, _ := dig(cfg, "apps", "http", "servers", "srv0").(map[string]any)
			if !tt.want(tlsApp, server) {
				t.Fatalf("the tls app %v, the server's automatic_https %v", tlsApp, server["automatic_https"])
			}
		})
	}
}
