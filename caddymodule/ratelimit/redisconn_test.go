package ratelimit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/pki"
)

// TestRedisConfig: a Redis off this host needs a password unless allowed;
// a password comes apart from the URL, from a file or given, never both;
// a CA needs rediss://. No error holds the password.
func TestRedisConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const secret = "s3cret-redis-password"
	pwFile, empty := write("password", secret+"\n"), write("empty", "\n")
	if err := pki.InitDir(filepath.Join(dir, "tls"), time.Hour, false); err != nil {
		t.Fatal(err)
	}
	ca, notPEM := filepath.Join(dir, "tls", pki.CAFile), write("not.pem", "no certificate")
	tests := []struct {
		name string
		c    RedisConfig
		want string // in the error; "" for none
	}{
		{"loopback without a password", RedisConfig{URL: "redis://127.0.0.1:6379/0"}, ""},
		{"localhost without a password", RedisConfig{URL: "redis://localhost:6379/0"}, ""},
		{"IPv6 loopback without a password", RedisConfig{URL: "redis://[::1]:6379/0"}, ""},
		{"a unix socket without a password", RedisConfig{URL: "unix:///run/redis/redis.sock?db=0"}, ""},
		{"off this host without a password", RedisConfig{URL: "redis://10.0.0.31:6379/0"}, "the Redis at 10.0.0.31:6379 has no password"},
		{"a name without a password", RedisConfig{URL: "rediss://hdc-edge@redis.internal:6380/0"}, "has no password"},
		{"allowed without a password", RedisConfig{URL: "redis://10.0.0.31:6379/0", AllowUnauthenticated: true}, ""},
		{"the password from a file", RedisConfig{URL: "redis://hdc-edge@10.0.0.31:6379/0", PasswordFile: pwFile}, ""},
		{"the password given", RedisConfig{URL: "redis://hdc-edge@10.0.0.31:6379/0", Password: secret}, ""},
		{"the password in the URL", RedisConfig{URL: "redis://hdc-edge:" + secret + "@127.0.0.1:6379/0"}, "the URL holds a password"},
		{"both", RedisConfig{URL: "redis://hdc-edge@10.0.0.31:6379/0", Password: secret, PasswordFile: pwFile}, "both a password and a password file"},
		{"an empty password file", RedisConfig{URL: "redis://hdc-edge@10.0.0.31:6379/0", PasswordFile: empty}, "is empty"},
		{"no password file", RedisConfig{URL: "redis://hdc-edge@10.0.0.31:6379/0", PasswordFile: filepath.Join(dir, "none")}, "the password file: open"},
		{"TLS with a CA", RedisConfig{URL: "rediss://hdc-edge@10.0.0.31:6380/0", PasswordFile: pwFile, CAFile: ca}, ""},
		{"a CA without TLS", RedisConfig{URL: "redis://hdc-edge@10.0.0.31:6379/0", PasswordFile: pwFile, CAFile: ca}, "use rediss://"},
		{"a CA file of no certificate", RedisConfig{URL: "rediss://hdc-edge@10.0.0.31:6380/0", PasswordFile: pwFile, CAFile: notPEM}, "holds no PEM certificate"},
		{"not a URL", RedisConfig{URL: "10.0.0.31:" + secret}, "is not a redis://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opt, err := tt.c.Options()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			case err != nil && strings.Contains(err.Error(), secret):
				t.Fatalf("the error holds the password: %v", err)
			case err != nil:
				return
			}
			if tt.c.PasswordFile != "" && (opt.Password != secret || opt.Username != "hdc-edge") {
				t.Fatalf("user %q, password %q; want hdc-edge and the file's first line", opt.Username, opt.Password)
			}
			if tt.c.CAFile != "" && (opt.TLSConfig == nil || opt.TLSConfig.RootCAs == nil || opt.TLSConfig.ServerName != "10.0.0.31") {
				t.Fatalf("the TLS of a rediss:// URL with a CA: %+v", opt.TLSConfig)
			}
		})
	}
}
