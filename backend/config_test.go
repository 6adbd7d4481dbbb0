package backend

import (
	"maps"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// parseSettings reads the settings as hdc-backend does: flags from args,
// then the environment env for the flags not given.
func parseSettings(env map[string]string, args ...string) (Config, zapcore.Level, error) {
	cfg := DefaultConfig()
	level := zap.NewAtomicLevelAt(zapcore.InfoLevel)
	settings := cfg.Settings(&level)
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	settings.Define(fs)
	if err := fs.Parse(args); err != nil {
		return cfg, 0, err
	}
	err := settings.LoadEnv(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	return cfg, level.Level(), err
}

func TestSettingsEnvAndFlags(t *testing.T) {
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
		"HDC_WEBHOOK_ALLOW_NETS":            "127.0.0.0/8, ::1, 127.1.2.3/16",
		"HDC_WEBHOOK_REFUSED_DESTINATIONS":  "10.0.0.21, 10.0.0.22:9180, [fd00::21]:443, 10.0.1.0/24",
		"HDC_LOG_LEVEL":                     "warn",
	}
	fromEnv := DefaultConfig()
	fromEnv.Listen, fromEnv.InternalListen, fromEnv.DataDir, fromEnv.DatabaseURL = "127.0.0.1:1", "127.0.0.1:2", "/env/data", "sqlite:/env/hdc.db"
	fromEnv.HopCA, fromEnv.HopCert, fromEnv.HopKey = "/tls/ca.pem", "/tls/backend.pem", "/tls/backend-key.pem"
	fromEnv.Issuer, fromEnv.Audience, fromEnv.SQSEndpoint = "iss", "aud", "http://127.0.0.1:4100"
	fromEnv.InternalListenNonLoopback = true
	fromEnv.BlobURL = "s3://bucket/prefix"
	fromEnv.AccessTokenTTL, fromEnv.RefreshTokenTTL, fromEnv.SigningKeyRotation = 10*time.Minute, 48*time.Hour, 168*time.Hour
	fromEnv.UploadLimit = 8 << 20
	fromEnv.WebhookWorkers, fromEnv.WebhookTimeout, fromEnv.WebhookLease = 3, 2*time.Second, 5*time.Second
	fromEnv.WebhookWorkspaceConcurrency, fromEnv.WebhookConnectTimeout = 2, time.Second
	fromEnv.WebhookBackoffBase = 10 * time.Millisecond
	fromEnv.WebhookAllowNets = []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("127.1.0.0/16"),
	}
	fromEnv.WebhookRefusedDestinations = []webhook.Destination{
		{Prefix: netip.MustParsePrefix("10.0.0.21/32")}, {Prefix: netip.MustParsePrefix("10.0.0.22/32"), Port: 9180},
		{Prefix: netip.MustParsePrefix("fd00::21/128"), Port: 443}, {Prefix: netip.MustParsePrefix("10.0.1.0/24")},
	}
	with := func(base Config, mutate func(*Config)) Config { mutate(&base); return base }
	withEnv := func(kv ...string) map[string]string {
		e := maps.Clone(env)
		for i := 0; i < len(kv); i += 2 {
			e[kv[i]] = kv[i+1]
		}
		return e
	}
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		want  Config
		level zapcore.Level
	}{
		{"defaults", nil, nil, DefaultConfig(), zapcore.InfoLevel},
		{"environment", env, nil, fromEnv, zapcore.WarnLevel},
		{"flags win", env, []string{"--listen", "127.0.0.1:3", "--access-token-ttl=15m", "--upload-limit", "1048576",
			"--webhook-give-up-after", "1h", "--webhook-backoff-max", "1m", "--internal-listen-non-loopback=false",
			"--sqs-endpoint", "https://sqs.internal", "--log-level", "debug"},
			with(fromEnv, func(c *Config) {
				c.Listen, c.AccessTokenTTL, c.UploadLimit = "127.0.0.1:3", 15*time.Minute, 1<<20
				c.WebhookGiveUpAfter, c.WebhookBackoffMax = time.Hour, time.Minute
				c.InternalListenNonLoopback, c.SQSEndpoint = false, "https://sqs.internal"
			}), zapcore.DebugLevel},
		{"a boolean flag alone is true", nil, []string{"--internal-listen-non-loopback"},
			with(DefaultConfig(), func(c *Config) { c.InternalListenNonLoopback = true }), zapcore.InfoLevel},
		{"an empty variable counts as unset", withEnv("HDC_DATA", "", "HDC_WEBHOOK_WORKERS", "", "AWS_ENDPOINT_URL_SQS", ""), nil,
			with(fromEnv, func(c *Config) {
				c.DataDir, c.WebhookWorkers, c.SQSEndpoint = "./data", 256, "http://127.0.0.1:1"
			}), zapcore.WarnLevel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, level, err := parseSettings(tt.env, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg, tt.want) {
				t.Errorf("config =\n%+v\nwant\n%+v", cfg, tt.want)
			}
			if level != tt.level {
				t.Errorf("log level %v, want %v", level, tt.level)
			}
		})
	}
}

// TestConfigLoadEnv: hdc up reads the same variables, but not the log
// level, which it has a flag of its own for.
func TestConfigLoadEnv(t *testing.T) {
	env := map[string]string{"HDC_UPLOAD_LIMIT": "1KiB", "HDC_LOG_LEVEL": "loud"}
	cfg := DefaultConfig()
	if err := cfg.LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if cfg.UploadLimit != 1<<10 {
		t.Errorf("upload limit %d", cfg.UploadLimit)
	}
}

// TestSettingsValueErrors: a value that does not parse is refused with
// the name it came by: the variable, or the flag.
func TestSettingsValueErrors(t *testing.T) {
	tests := []struct{ flag, env, value string }{
		{"access-token-ttl", "HDC_ACCESS_TOKEN_TTL", "soon"},
		{"refresh-token-ttl", "HDC_REFRESH_TOKEN_TTL", "99999999999999999"},
		{"webhook-lease", "HDC_WEBHOOK_LEASE", "long"},
		{"upload-limit", "HDC_UPLOAD_LIMIT", "big"},
		{"webhook-workers", "HDC_WEBHOOK_WORKERS", "many"},
		{"webhook-allow-nets", "HDC_WEBHOOK_ALLOW_NETS", "localhost"},
		{"webhook-refused-destinations", "HDC_WEBHOOK_REFUSED_DESTINATIONS", "edge.internal:9180"},
		{"internal-listen-non-loopback", "HDC_INTERNAL_LISTEN_NON_LOOPBACK", "yes please"},
		{"log-level", "HDC_LOG_LEVEL", "loud"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			_, _, err := parseSettings(map[string]string{tt.env: tt.value})
			if err == nil || !strings.HasPrefix(err.Error(), tt.env+": ") || !strings.Contains(err.Error(), tt.value) {
				t.Errorf("%s=%s: %v", tt.env, tt.value, err)
			}
		})
		t.Run("--"+tt.flag, func(t *testing.T) {
			// A bad variable does not matter when the flag is given.
			_, _, err := parseSettings(map[string]string{tt.env: tt.value}, "--"+tt.flag+"="+tt.value)
			if err == nil || !strings.Contains(err.Error(), "--"+tt.flag) {
				t.Errorf("--%s=%s: %v", tt.flag, tt.value, err)
			}
		})
	}
}

// TestSettingsTable: every setting has a flag, a variable and a usage of
// its own, and shows a value it reads back, so that the defaults --help
// and docs/configuration.md show are values an operator may write.
func TestSettingsTable(t *testing.T) {
	cfg := DefaultConfig()
	level := zap.NewAtomicLevelAt(zapcore.InfoLevel)
	flags, vars := map[string]bool{}, map[string]bool{}
	for _, s := range cfg.Settings(&level) {
		t.Run(s.Flag, func(t *testing.T) {
			if s.Flag == "" || flags[s.Flag] || len(s.Env) == 0 || s.Usage == "" {
				t.Errorf("%+v: a flag of its own, a variable and a usage wanted", s)
			}
			flags[s.Flag] = true
			for _, v := range s.Env {
				if vars[v] {
					t.Errorf("%s is the variable of two settings", v)
				}
				vars[v] = true
			}
			shown := s.Value.String()
			if err := s.Value.Set(shown); err != nil || s.Value.String() != shown {
				t.Errorf("shows %q, which reads back as %q (%v)", shown, s.Value.String(), err)
			}
		})
	}
	if !reflect.DeepEqual(cfg, DefaultConfig()) {
		t.Errorf("reading the defaults back changed them:\n%+v", cfg)
	}
}

// TestKeeperNamedAlike: the openers of package storage name the keeper's
// setting in their errors as the settings' table does.
func TestKeeperNamedAlike(t *testing.T) {
	if got := named("keeper"); got != storage.KeeperSetting {
		t.Fatalf("the settings name the keeper %q, storage names it %q", got, storage.KeeperSetting)
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
		{"internal on a private address without the hop's TLS", "127.0.0.1:9080", "10.0.0.5:9081", false, false, false},
		{"internal on a private address with the hop's TLS", "127.0.0.1:9080", "10.0.0.5:9081", true, false, true},
		{"internal off loopback without the hop's TLS, allowed", "127.0.0.1:9080", "0.0.0.0:9081", false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Keeper = testKeeper
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
		cfg.Keeper = testKeeper
		cfg.HopCA = "ca.pem"
		if err := cfg.validate(); err == nil {
			t.Error("accepted a CA without a certificate and key")
		}
	})
}
