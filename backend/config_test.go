package backend

import (
	"errors"
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
		"HDC_LISTEN":               "127.0.0.1:1",
		"HDC_INTERNAL_LISTEN":      "127.0.0.1:2",
		"HDC_DATA":                 "/env/data",
		"HDC_DATABASE_URL":         "sqlite:/env/hdc.db",
		"HDC_EDGE_SECRET":          "s3",
		"HDC_ACCESS_TOKEN_TTL":     "600",
		"HDC_REFRESH_TOKEN_TTL":    "48h",
		"HDC_SIGNING_KEY_ROTATION": "168h",
		"HDC_UPLOAD_LIMIT":         "8MiB",
		"HDC_ISSUER":               "iss",
		"HDC_AUDIENCE":             "aud",
		"AWS_ENDPOINT_URL":         "http://127.0.0.1:1",
		"AWS_ENDPOINT_URL_SQS":     "http://127.0.0.1:4100",
		"HDC_WEBHOOK_WORKERS":      "3",
		"HDC_WEBHOOK_TIMEOUT":      "2s",
		"HDC_WEBHOOK_LEASE":        "5",
		"HDC_WEBHOOK_BACKOFF_BASE": "10ms",
		"HDC_WEBHOOK_ALLOW_NETS":   "127.0.0.0/8, ::1, 10.1.2.3/16",
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
	want.EdgeSecret, want.Issuer, want.Audience, want.SQSEndpoint = "s3", "iss", "aud", "http://127.0.0.1:4100"
	want.AccessTokenTTL, want.RefreshTokenTTL, want.SigningKeyRotation = 15*time.Minute, 48*time.Hour, 168*time.Hour
	want.UploadLimit = 1 << 20
	want.WebhookWorkers, want.WebhookTimeout, want.WebhookLease = 3, 2*time.Second, 5*time.Second
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
	} {
		cfg := DefaultConfig()
		err := cfg.LoadEnv(func(k string) (string, bool) { return value, k == name })
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, value, err)
		}
	}
	for name, mutate := range map[string]func(*Config){
		"zero ttl":          func(c *Config) { c.AccessTokenTTL = 0 },
		"huge upload limit": func(c *Config) { c.UploadLimit = 4 << 30 },
		"no issuer":         func(c *Config) { c.Issuer = "" },
		"no throttle":       func(c *Config) { c.LoginFailuresPerClient = 0 },
		"bad sqs endpoint":  func(c *Config) { c.SQSEndpoint = "127.0.0.1:4100" },
		"no data dir":       func(c *Config) { c.DataDir = "" },
	} {
		cfg := DefaultConfig()
		mutate(&cfg)
		if cfg.validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
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
	} {
		cfg := DefaultConfig()
		cfg.DataDir = t.TempDir()
		mutate(&cfg)
		if srv, err := New(cfg, zap.NewNop()); err == nil {
			srv.Close()
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSQLitePath(t *testing.T) {
	tests := []struct {
		url, want string
		wantErr   error
	}{
		{"", "/d/hdc.db", nil},
		{"/abs/x.db", "/abs/x.db", nil},
		{"rel/x.db", "rel/x.db", nil},
		{"sqlite:rel/x.db", "rel/x.db", nil},
		{"sqlite:///abs/x.db", "/abs/x.db", nil},
		{"file:/abs/x.db", "/abs/x.db", nil},
		{"postgres://u@h/db", "", ErrPostgresNotBuilt},
		{"postgresql://u@h/db", "", ErrPostgresNotBuilt},
		{"mysql://u@h/db", "", errors.New("")},
		{"sqlite:", "", errors.New("")},
	}
	for _, tt := range tests {
		got, err := sqlitePath(tt.url, "/d")
		switch {
		case tt.wantErr == nil && (err != nil || got != tt.want):
			t.Errorf("sqlitePath(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
		case tt.wantErr == ErrPostgresNotBuilt && !errors.Is(err, ErrPostgresNotBuilt):
			t.Errorf("sqlitePath(%q) error = %v", tt.url, err)
		case tt.wantErr != nil && err == nil:
			t.Errorf("sqlitePath(%q) = %q, want an error", tt.url, got)
		}
	}
}
