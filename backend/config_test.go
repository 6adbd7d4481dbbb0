package backend

import (
	"flag"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

func TestConfigEnvAndFlags(t *testing.T) {
	env := map[string]string{
		"HDC_LISTEN":                        "127.0.0.1:1",
		"HDC_INTERNAL_LISTEN":               "127.0.0.1:2",
		"HDC_DATA":                          "/env/data",
		"HDC_DATABASE_URL":                  "sqlite:/env/hdc.db",
		"HDC_BLOB_URL":                      "s3://bucket/prefix",
		"HDC_HOP_CA":                        "/tls/ca.pem",
		"HDC_HOP_CERT":                      "/tls/backend.pem",
		"HDC_HOP_KEY":                       "/tls/backend-key.pem",
		"HDC_INTERNAL_LISTEN_NON_LOOPBACK":  "1",
		"HDC_ACCESS_TOKEN_TTL":              "600",
		"HDC_REFRESH_TOKEN_TTL":             "48h",
		"HDC_SIGNING_KEY_ROTATION":          "168h",
		"HDC_UPLOAD_LIMIT":                  "8MiB",
		"HDC_ISSUER":                        "iss",
		"HDC_AUDIENCE":                      "aud",
		"AWS_ENDPOINT_URL":                  "http://127.0.0.1:1",
		"AWS_ENDPOINT_URL_SQS":              "http://127.0.0.1:4100",
		"HDC_WEBHOOK_WORKERS":               "3",
		"HDC_WEBHOOK_WORKSPACE_CONCURRENCY": "2",
		"HDC_WEBHOOK_TIMEOUT":               "2s",
		"HDC_WEBHOOK_CONNECT_TIMEOUT":       "1s",
		"HDC_WEBHOOK_LEASE":                 "5",
		"HDC_WEBHOOK_BACKOFF_BASE":          "10ms",
		"HDC_WEBHOOK_ALLOW_NETS":            "127.0.0.0/8, ::1, 10.1.2.3/16",
	}
	cfg := DefaultConfig()
	if err := cfg.LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse([]string{"-listen", "127.0.0.1:3", "-access-token-ttl", "15m", "-upload-limit", "1048576",
		"-webhook-give-up-after", "1h", "-webhook-backoff-max", "1m"}); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Listen, want.InternalListen, want.DataDir, want.DatabaseURL = "127.0.0.1:3", "127.0.0.1:2", "/env/data", "sqlite:/env/hdc.db"
	want.HopCA, want.HopCert, want.HopKey = "/tls/ca.pem", "/tls/backend.pem", "/tls/backend-key.pem"
	want.Issuer, want.Audience, want.SQSEndpoint = "iss", "aud", "http://127.0.0.1:4100"
	want.InternalListenNonLoopback = true
	want.BlobURL = "s3://bucket/prefix"
	want.AccessTokenTTL, want.RefreshTokenTTL, want.SigningKeyRotation = 15*time.Minute, 48*time.Hour, 168*time.Hour
	want.UploadLimit = 1 << 20
	want.WebhookWorkers, want.WebhookTimeout, want.WebhookLease = 3, 2*time.Second, 5*time.Second
	want.WebhookWorkspaceConcurrency, want.WebhookConnectTimeout = 2, time.Second
	want.WebhookBackoffBase, want.WebhookBackoffMax, want.WebhookGiveUpAfter = 10*time.Millisecond, time.Minute, time.Hour
	want.WebhookAllowNets = []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("10.1.0.0/16"),
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("config =\n%+v\nwant\n%+v", cfg, want)
	}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, value := range map[string]string{
		"HDC_ACCESS_TOKEN_TTL": "soon", "HDC_UPLOAD_LIMIT": "big", "HDC_REFRESH_TOKEN_TTL": "99999999999999999",
		"HDC_WEBHOOK_WORKERS": "many", "HDC_WEBHOOK_ALLOW_NETS": "127.0.0.1/8,localhost", "HDC_WEBHOOK_LEASE": "long",
		"HDC_INTERNAL_LISTEN_NON_LOOPBACK": "yes please",
	} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			err := cfg.LoadEnv(func(k string) (string, bool) { return value, k == name })
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s: %v", name, value, err)
			}
		})
	}
	for name, mutate := range map[string]func(*Config){
		"zero ttl":          func(c *Config) { c.AccessTokenTTL = 0 },
		"huge upload limit": func(c *Config) { c.UploadLimit = 4 << 30 },
		"no issuer":         func(c *Config) { c.Issuer = "" },
		"no throttle":       func(c *Config) { c.LoginFailuresPerClient = 0 },
		"bad sqs endpoint":  func(c *Config) { c.SQSEndpoint = "127.0.0.1:4100" },
		"no data dir":       func(c *Config) { c.DataDir = "" },
		"no shutdown time":  func(c *Config) { c.ShutdownTimeout = 0 },
		"rotation too fast": func(c *Config) { c.SigningKeyRotation = keyPublishAhead },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			mutate(&cfg)
			if cfg.validate() == nil {
				t.Errorf("%s: accepted", name)
			}
		})
	}
}

// TestConfigListenSafety: the backend believes identity headers from
// the edge, proved by the hop's mutual TLS, and its internal listener has
// no authentication; both fail closed off loopback.
func TestConfigListenSafety(t *testing.T) {
	tests := []struct {
		name, listen, internal   string
		hop, internalNonLoopback bool
		ok                       bool
	}{
		{"defaults", "127.0.0.1:9080", "127.0.0.1:9081", false, false, true},
		{"loopback without the hop's TLS", "127.9.9.9:9080", "[::1]:9081", false, false, true},
		{"localhost without the hop's TLS", "localhost:9080", "LOCALHOST:9081", false, false, true},
		{"IPv6 loopback without the hop's TLS", "[::1]:9080", "127.0.0.1:9081", false, false, true},
		{"all interfaces without the hop's TLS", "0.0.0.0:9080", "127.0.0.1:9081", false, false, false},
		{"empty host without the hop's TLS", ":9080", "127.0.0.1:9081", false, false, false},
		{"IPv6 any without the hop's TLS", "[::]:9080", "127.0.0.1:9081", false, false, false},
		{"private address without the hop's TLS", "10.0.0.5:9080", "127.0.0.1:9081", false, false, false},
		{"host name without the hop's TLS", "backend.internal:9080", "127.0.0.1:9081", false, false, false},
		{"malformed without the hop's TLS", "127.0.0.1", "127.0.0.1:9081", false, false, false},
		{"all interfaces with the hop's TLS", "0.0.0.0:9080", "127.0.0.1:9081", true, false, true},
		{"internal on all interfaces", "127.0.0.1:9080", "0.0.0.0:9081", false, false, false},
		{"internal on empty host", "127.0.0.1:9080", ":9081", false, false, false},
		{"internal on a private address", "127.0.0.1:9080", "10.0.0.5:9081", true, false, false},
		{"internal off loopback, allowed", "0.0.0.0:9080", "0.0.0.0:9081", true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Listen, cfg.InternalListen = tt.listen, tt.internal
			if tt.hop {
				cfg.HopCA, cfg.HopCert, cfg.HopKey = "ca.pem", "backend.pem", "backend-key.pem"
			}
			cfg.InternalListenNonLoopback = tt.internalNonLoopback
			if err := cfg.validate(); (err == nil) != tt.ok {
				t.Errorf("validate = %v", err)
			}
		})
	}
	t.Run("part of the hop's files", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.HopCA = "ca.pem"
		if err := cfg.validate(); err == nil {
			t.Error("accepted a CA without a certificate and key")
		}
	})
}

// TestWebhookConfigErrors: the delivery settings are checked when the
// server is built.
func TestWebhookConfigErrors(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"no workers":          func(c *Config) { c.WebhookWorkers = 0 },
		"lease below timeout": func(c *Config) { c.WebhookLease = c.WebhookTimeout },
		"max below base":      func(c *Config) { c.WebhookBackoffMax = c.WebhookBackoffBase / 2 },
		"no horizon":          func(c *Config) { c.WebhookGiveUpAfter = 0 },
		"no poll interval":    func(c *Config) { c.WebhookPollInterval = 0 },
		"no connect timeout":  func(c *Config) { c.WebhookConnectTimeout = 0 },
		"one workspace could hold every worker": func(c *Config) {
			c.WebhookWorkers, c.WebhookWorkspaceConcurrency = 8, 8
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			mutate(&cfg)
			if srv, err := New(t.Context(), cfg, zap.NewNop()); err == nil {
				srv.Close()
				t.Errorf("%s: accepted", name)
			}
		})
	}
}
