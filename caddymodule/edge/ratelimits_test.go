package edge

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// TestRedisOptions: the configuration's Redis, its placeholders replaced;
// a password written in the configuration is refused, and a refusal names
// where the reference Caddyfile reads the settings, never the password.
func TestRedisOptions(t *testing.T) {
	t.Setenv("HDC_TEST_REDIS_PW", "hunter2-from-the-environment")
	tests := []struct {
		name string
		c    RateLimitConfig
		want string // in the error; "" for none
	}{
		{"none", RateLimitConfig{Redis: "{env.HDC_TEST_NO_SUCH_VARIABLE}"}, ""},
		{"the password from the environment", RateLimitConfig{Redis: "redis://hdc-edge@10.0.0.31:6379/0", RedisPassword: "{env.HDC_TEST_REDIS_PW}"}, ""},
		{"the password written", RateLimitConfig{Redis: "redis://hdc-edge@10.0.0.31:6379/0", RedisPassword: "hunter2-written"}, "redis_password is written in the configuration"},
		{"no password off this host", RateLimitConfig{Redis: "redis://10.0.0.31:6379/0"}, "has no password"},
		{"allowed", RateLimitConfig{Redis: "redis://10.0.0.31:6379/0", RedisAllowUnauthenticated: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt, err := tt.c.RedisOptions(caddy.NewReplacer())
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "HDC_RATELIMIT_REDIS")):
				t.Fatalf("err = %v, want one saying %q and naming the settings", err, tt.want)
			case err != nil && strings.Contains(err.Error(), "hunter2"):
				t.Fatalf("the error holds the password: %v", err)
			case tt.c.RedisPassword != "" && err == nil && opt.Password != "hunter2-from-the-environment":
				t.Fatalf("password %q", opt.Password)
			}
		})
	}
}
