package backend

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
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
	}
	cfg := DefaultConfig()
	if err := cfg.LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse([]string{"-listen", "127.0.0.1:3", "-access-token-ttl", "15m", "-upload-limit", "1048576"}); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Listen, want.InternalListen, want.DataDir, want.DatabaseURL = "127.0.0.1:3", "127.0.0.1:2", "/env/data", "sqlite:/env/hdc.db"
	want.EdgeSecret, want.Issuer, want.Audience, want.SQSEndpoint = "s3", "iss", "aud", "http://127.0.0.1:4100"
	want.AccessTokenTTL, want.RefreshTokenTTL, want.SigningKeyRotation = 15*time.Minute, 48*time.Hour, 168*time.Hour
	want.UploadLimit = 1 << 20
	if cfg != want {
		t.Fatalf("config =\n%+v\nwant\n%+v", cfg, want)
	}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, value := range map[string]string{
		"HDC_ACCESS_TOKEN_TTL": "soon", "HDC_UPLOAD_LIMIT": "big", "HDC_REFRESH_TOKEN_TTL": "99999999999999999",
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
